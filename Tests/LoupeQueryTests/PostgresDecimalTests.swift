import Foundation
import LoupeModel
import LoupePostgres
import LoupeQuery
import LoupeTestSupport
import XCTest

/// PostgreSQL `numeric` values with more digits than a double holds: read, shown, written as
/// JSON and through edits digit for digit (``ExactDecimal``), compared as their nearest double.
final class PostgresDecimalTests: XCTestCase {
    /// Decimals of `numeric(40,10)` made from a seed: 1–30 integer digits, 10 fraction digits,
    /// either sign, each with more than 15 significant digits.
    static func generatedDecimals(count: Int, seed: UInt64) -> [String] {
        var state = seed
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        return (0..<count).map { _ in
            let whole = String((0..<(6 + next(25))).map { i in Character(String(i == 0 ? 1 + next(9) : next(10))) })
            let fraction = String((0..<10).map { _ in Character(String(next(10))) })
            return (next(2) == 0 ? "-" : "") + whole + "." + fraction
        }
    }

    func testWideNumericsKeepEveryDigitThroughReadsJSONAndEdits() throws {
        let url = try PostgresServer.freshDatabase("decimals")
        let values = Self.generatedDecimals(count: 40, seed: 46)
        let rows = values.enumerated().map { "(\($0.offset + 1), 'n\($0.offset)', \($0.element))" }.joined(separator: ", ")
        XCTAssertEqual(try PostgresServer.psql(url, "CREATE TABLE acct (id integer PRIMARY KEY, name text, amount numeric(40,10)); INSERT INTO acct VALUES \(rows);"), 0)
        let host = PostgresHost(url: url)
        let session = ReplSession(graph: try host.load(path: url, progress: nil), mode: .json)
        session.host = host
        session.storePath = url

        // Shown and written as JSON with every digit.
        let json = session.execute("acct sort by id select amount")
        XCTAssertNil(json.error)
        for value in values { XCTAssertTrue(json.output.contains(#""amount": \#(value)"#), "\(value) in \(json.output)") }
        // Compared as their nearest double, in memory as PostgreSQL's answer does.
        let first = try XCTUnwrap(Double(values[0]))
        let above = session.execute("count acct where amount > \(values[0])")
        XCTAssertEqual(above.output.trimmingCharacters(in: .whitespacesAndNewlines), String(values.filter { Double($0)! > first }.count))

        // An edit of another column leaves them byte for byte; an edit of one writes its digits.
        let replacement = Self.generatedDecimals(count: 1, seed: 7)[0]
        XCTAssertNil(session.execute("update acct set name = \"renamed\"").error)
        XCTAssertNil(session.execute("update acct where id == 2 set amount = \(replacement)").error)
        XCTAssertNil(session.execute(".commit").error)
        let stored = try PostgresConnection(url: url).query("SELECT amount::text, name FROM acct ORDER BY id").rows
        var expected = values
        expected[1] = replacement
        XCTAssertEqual(stored.map { $0[0] ?? "" }, expected)
        XCTAssertEqual(Set(stored.map { $0[1] ?? "" }), ["renamed"])
    }

    func testExactDecimalsAreTheSameValueByTheirDigits() throws {
        let a = try XCTUnwrap(ExactDecimal("12345678901234567890.1234567890"))
        XCTAssertEqual(Value.decimal(a), .decimal(try XCTUnwrap(ExactDecimal("12345678901234567890.123456789"))))
        XCTAssertNotEqual(Value.decimal(a), .decimal(try XCTUnwrap(ExactDecimal("12345678901234567890.1234567891"))))
        XCTAssertEqual(ExactDecimal.value("1.50"), .double(1.5), "a double says it exactly")
        XCTAssertEqual(ExactDecimal.value("NaN")?.numeric?.isNaN, true)
        XCTAssertNil(ExactDecimal("1e5"))
        XCTAssertNil(ExactDecimal("."))
        XCTAssertEqual(ValueFormatter.json(.decimal(a)), "12345678901234567890.1234567890")
        XCTAssertEqual(a.negated.text, "-12345678901234567890.1234567890")
        XCTAssertEqual(a.negated.negated, a)
        // A literal negated twice is itself, digit for digit.
        let twice = try Parser.parse("acct where amount == - -12345678901234567890.1234567890").description
        XCTAssertTrue(twice.contains("== 12345678901234567890.1234567890"), twice)
    }
}
