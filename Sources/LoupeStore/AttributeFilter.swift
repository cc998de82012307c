import Foundation
import GRDB
import LoupeModel

/// A predicate over one type's numeric attributes that SQLite can answer over a Persist file
/// without loading it: comparisons of an attribute with a number, combined with and/or/not.
///
/// Its SQL gives exactly the query engine's answer under one condition, checked in the same
/// statement: every value the named attributes hold is a number, null or missing (a text or a
/// boolean would make the engine compare across kinds, or refuse). Each comparison is 0 or 1,
/// never NULL (a missing value compares false, `!=` true), so `not` means what the engine means.
public indirect enum AttributeFilter: Sendable, Equatable {
    case constant(Bool)
    case and([AttributeFilter])
    case or([AttributeFilter])
    case not(AttributeFilter)
    case compare(key: String, op: Comparison, value: Number)
    case between(key: String, low: Number, high: Number)

    public enum Comparison: String, Sendable { case equal = "=", notEqual = "IS NOT", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">=" }

    /// A numeric literal, bound as it was written (an integer stays an integer).
    public enum Number: Sendable, Equatable {
        case int(Int64)
        case double(Double)
        var databaseValue: DatabaseValue {
            switch self {
            case .int(let i): return i.databaseValue
            case .double(let d): return d.databaseValue
            }
        }
    }

    /// Every attribute the filter reads.
    public var keys: Set<String> {
        switch self {
        case .constant: return []
        case .and(let fs), .or(let fs): return fs.reduce(into: Set<String>()) { $0.formUnion($1.keys) }
        case .not(let f): return f.keys
        case .compare(let key, _, _), .between(let key, _, _): return [key]
        }
    }

    /// The SQL expression (0 or 1) and its arguments, in order; keys are bound as JSON paths.
    func sql(_ arguments: inout [DatabaseValue]) -> String {
        switch self {
        case .constant(let b): return b ? "1" : "0"
        case .and(let fs): return "(" + (fs.isEmpty ? "1" : fs.map { $0.sql(&arguments) }.joined(separator: " AND ")) + ")"
        case .or(let fs): return "(" + (fs.isEmpty ? "0" : fs.map { $0.sql(&arguments) }.joined(separator: " OR ")) + ")"
        case .not(let f): return "(NOT \(f.sql(&arguments)))"
        case .compare(let key, let op, let value):
            arguments.append(AttributeFilter.path(key).databaseValue)
            arguments.append(value.databaseValue)
            return "coalesce(json_extract(json, ?) \(op.rawValue) ?, 0)"
        case .between(let key, let low, let high):
            arguments.append(AttributeFilter.path(key).databaseValue)
            arguments.append(low.databaseValue)
            arguments.append(high.databaseValue)
            return "coalesce(json_extract(json, ?) BETWEEN ? AND ?, 0)"
        }
    }

    /// `$."key"`: a JSON path to one top-level key.
    public static func path(_ key: String) -> String { "$.\"" + key + "\"" }

    /// True when SQLite's JSON paths can spell the key exactly: no quote or backslash, and no
    /// U+FFFD, which a key read from bytes that are no UTF-8 holds in their place (the path
    /// would name the replacement character, the document holds the bytes).
    public static func canSpell(_ key: String) -> Bool { !key.contains("\"") && !key.contains("\\") && !key.contains("\u{FFFD}") }
}

extension PersistFormat {
    /// How many objects of the type stored as `type` satisfy `filter`, answered by SQLite over the
    /// file; nil when the answer could differ from the query engine's (an attribute the filter
    /// reads holds something other than a number or null, a key SQLite cannot spell, a document
    /// SQLite cannot parse), and then the caller loads the graph.
    public static func count(_ file: StoreFile, type: String, where filter: AttributeFilter) throws -> Int? {
        let keys = filter.keys
        guard keys.allSatisfy(AttributeFilter.canSpell) else { return nil }
        // A name with U+FFFD may be text that is not UTF-8, shown repaired: the load matches its bytes.
        guard !type.unicodeScalars.contains("\u{FFFD}") else { return nil }
        var arguments: [DatabaseValue] = []
        let predicate = filter.sql(&arguments)
        var kindChecks: [String] = [], presence: [String] = []
        for key in keys.sorted() {
            kindChecks.append("json_type(json, ?) NOT IN ('integer', 'real', 'null')")
            arguments.append(AttributeFilter.path(key).databaseValue)
        }
        // A member `json_extract` reads otherwise than the load: spelled twice (SQLite reads the
        // first, the load keeps the last), or spelled with escapes (SQLite does not decode a
        // path's label): a document that spells the key's quoted name twice, or holds a `\u`
        // escape (or `\/`, for a key with a slash), may hold one.
        var doubtful = ["instr(json, '\\u') > 0"]
        if keys.contains(where: { $0.contains("/") }) { doubtful.append("instr(json, '\\/') > 0") }
        for key in keys.sorted() {
            doubtful.append("length(json) - length(replace(json, ?, '')) > ?")
            let quoted = "\"" + key + "\""
            arguments += [quoted.databaseValue, quoted.unicodeScalars.count.databaseValue]   // (length() counts characters)
        }
        for key in keys.sorted() {
            // The engine knows an attribute some object holds (or refuses the name): each key
            // must be held by some document, as stored (no other spelling).
            presence.append("count(*) FILTER (WHERE json_type(json, ?) IS NOT NULL)")
            arguments.append(AttributeFilter.path(key).databaseValue)
        }
        arguments.append(type.databaseValue)
        let sql = """
            SELECT count(*) FILTER (WHERE \(predicate)),
                   count(*) FILTER (WHERE \(kindChecks.isEmpty ? "0" : kindChecks.joined(separator: " OR "))),
                   count(*) FILTER (WHERE NOT json_valid(json) OR json_type(json) != 'object' OR \(doubtful.joined(separator: " OR ")))
                   \(presence.map { ", " + $0 }.joined())
            FROM by_type WHERE type_name = ?
            """
        return try file.read { db -> Int? in
            // Objects whose type name is stored as bytes show under the same name: not here.
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM by_type WHERE type_name = CAST(? AS BLOB))", arguments: [type]) ?? true {
                return nil
            }
            guard let row = try? Row.fetchOne(db, sql: sql, arguments: StatementArguments(arguments)) else { return nil }
            let (matching, otherKinds, unparsed) = (row[0] as Int, row[1] as Int, row[2] as Int)
            let present = (0..<keys.count).allSatisfy { (row[3 + $0] as Int) > 0 }
            return otherKinds == 0 && unparsed == 0 && present ? matching : nil
        }
    }
}
