import Foundation
import LoupeModel
import LoupeQuery
import LoupeSQL
import LoupeStore
import LoupeTestSupport
import XCTest

/// `@sum` and `@avg` add the decimals numbers are written as, exactly (``DecimalSum``): what a
/// user reads is what the store's values add up to, in any order, in every engine.
final class AggregationTests: XCTestCase {
    func testDecimalsAddExactly() {
        XCTAssertEqual(Self.sum([.double(0.1), .double(0.2)]), .double(0.3))
        XCTAssertEqual(Self.sum([.double(1.1), .double(2.2), .double(3.3)]), .double(6.6))
        XCTAssertEqual(Self.sum([.int(1), .double(0.5), .null, .string("9")]), .double(1.5))
        XCTAssertEqual(Self.sum([.int(2), .int(3)]), .int(5))
        XCTAssertEqual(Self.sum([]), .int(0))
        // Past 64 bits, integers still add exactly (to the nearest double).
        XCTAssertEqual(Self.sum([.int(.max), .int(.max), .int(2)]), .double(18446744073709551616))
        // More than 15 digits, tiny and large numbers: their shortest text, added exactly.
        XCTAssertEqual(Self.sum([.double(0.30000000000000004), .double(-0.30000000000000004)]), .double(0))
        XCTAssertEqual(Self.sum([.double(1e-20), .double(2e-20)]), .double(3e-20))
        XCTAssertEqual(Self.sum([.double(1e20), .double(1), .double(-1e20)]), .double(1))
        // Beyond what decimals hold: the plain binary sum.
        XCTAssertEqual(Self.sum([.double(1e300), .double(1e300)]), .double(2e300))
        XCTAssertEqual(Self.sum([.double(.infinity), .double(1)]), .double(.infinity))
        guard case .double(let nan) = Self.sum([.double(.nan), .double(1)]) else { return XCTFail("not a double") }
        XCTAssertTrue(nan.isNaN)
    }

    /// Prices of two decimals, in random orders: every order sums to the cents' sum exactly.
    func testTheOrderNeverChangesASum() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let cents = (0..<Int.random(in: 1...60, using: &generator)).map { _ in Int.random(in: -100_000...100_000, using: &generator) }
            let expected = Double(cents.reduce(0, +)) / 100
            for _ in 0..<3 {
                let values = cents.shuffled(using: &generator).map { Value.double(Double($0) / 100) }
                XCTAssertEqual(Self.sum(values), .double(expected), "\(cents)")
            }
        }
    }

    func testAveragesDivideAsDecimals() {
        var seven = DecimalSum()
        for total in [1.98, 3.96, 5.94, 0.99, 1.98, 13.86, 8.91] { seven.add(.double(total)) }
        XCTAssertEqual(seven.value, .double(37.62))
        // 37.62 / 7 = 5.374285714285714285…, whose nearest double is not 37.62's double / 7.
        XCTAssertEqual(seven.average, 5.3742857142857146)
        XCTAssertNotEqual(seven.average, 37.62 / 7)
        var exact = DecimalSum()
        for total in [1.98, 3.96, 5.94, 8.91, 13.86, 0.99, 3.98] { exact.add(.double(total)) }
        XCTAssertEqual(exact.value, .double(39.62))
        XCTAssertEqual(exact.average, 5.66)
        XCTAssertNil(DecimalSum().average)
    }

    /// Chinook's invoice totals per customer, as the loaded engine and SQL over the file answer
    /// them: customer 2's seven invoices sum to 37.62 (binary floating point says
    /// 37.620000000000005) and average 5.66 for customer 1.
    func testChinookTotalsAreTheirDecimalSumsInEveryEngine() throws {
        let path = try Shared.copy("realdata/chinook/Chinook_Sqlite.sqlite")
        let statement = "Customer sort by CustomerId limit 2 select CustomerId, @links.Invoice.Customer.Total.@sum, @links.Invoice.Customer.Total.@avg"
        let graph = try LoadedStore.open(path).graph
        let loaded = try QueryEngine(graph: graph).run(statement).render(.csv, graph: graph)
        XCTAssertEqual(loaded.split(separator: "\r\n").dropFirst(), ["1,39.62,5.66", "2,37.62,5.3742857142857146"])
        let (result, resultGraph) = try XCTUnwrap(try SQLPushdown.run(try Parser.parse(statement), file: try StoreFile.openForReading(path)))
        XCTAssertEqual(result.render(.csv, graph: resultGraph), loaded)
    }

    static func sum(_ values: [Value]) -> Value {
        var total = DecimalSum()
        for v in values { total.add(v) }
        return total.value
    }
}
