import Foundation
import LoupeModel
import LoupeQuery
import LoupeStore
import Synchronization

/// Writes staged changes into a PostgreSQL database, all or nothing, as ``StoreCommit`` writes a
/// relational SQLite file: one statement per changed object (`INSERT` of the columns given,
/// `UPDATE … SET` of the columns changed, `DELETE`), each keyed by the table's primary key, every
/// value bound as a parameter (never spliced into the SQL), identifiers quoted.
///
/// The commit runs in one `READ WRITE` transaction on a connection of its own. Before anything is
/// written, every existing row the changes touch is read `FOR UPDATE` (locked until the commit
/// ends) and compared with what was loaded; a row another session changed or deleted, or a key
/// another session inserted, refuses the commit and names the objects. Inserts go parents first
/// and deletes children first (by declared foreign keys), so that PostgreSQL's immediate
/// foreign-key checks pass when the result is consistent; any error PostgreSQL raises (a
/// constraint, a value the column's type refuses) rolls everything back. The caller keeps its
/// pending changes whatever happens.
public enum PostgresCommit {
    /// The writes a commit makes, object by object, in order.
    public struct Plan: Sendable {
        public struct Unit: Sendable {
            public let object: ObjectIdentity
            public let kind: Kind
            /// The statement, `$n` placeholders in order of `parameters` (text, nil for NULL).
            public let sql: String
            public let parameters: [String?]
            /// The statement with its values written in as literals, for people (`.changes`).
            public let display: String
            /// For an existing row: the table, its key condition (`$1…`) and key values, and the
            /// columns with the values they held when loaded.
            let check: Check?
            /// For a new row: the same key condition, which must find nothing.
            let mustBeNew: Check?
        }

        public enum Kind: String, Sendable { case create, update, delete }

        struct Check: Sendable {
            let table: String
            let condition: String
            let key: [String?]
            let columns: [String]
            let loaded: [Value]
        }

        public internal(set) var units: [Unit] = []

        /// The plan as text, at most about `maxLines` lines.
        public func description(maxLines: Int) -> String {
            var lines: [String] = []
            for (i, unit) in units.enumerated() {
                if lines.count >= maxLines {
                    lines.append(WritePlan.remainder(objects: units.count - i, statements: units.count - i))
                    break
                }
                lines.append(unit.display)
            }
            return lines.joined(separator: "\n")
        }
    }

    /// The writes committing `pending` would make, with the tables' columns as the catalog of the
    /// database at `url` describes them.
    public static func preview(_ pending: PendingChanges, url: String) throws -> Plan {
        let connection = try PostgresConnection(url: url)
        let described = try connection.snapshot { try PostgresDatabase.describeAll(connection) }
        return try plan(pending, described: described, server: connection.server)
    }

    /// Writes `pending` into the database at `url` in one transaction (see the type's comment).
    public static func commit(_ pending: PendingChanges, url: String) throws -> StoreCommit.Report {
        try inWriteTransaction(pending, url: url) { connection in
            let described = try PostgresDatabase.describeAll(connection)
            let plan = try plan(pending, described: described, server: connection.server)
            // Every row the changes touch, locked and compared with what was loaded.
            var conflicts: [String] = []
            for unit in plan.units {
                if let check = unit.check {
                    let found = try connection.query("SELECT \(check.columns.map(SQL.identifier).joined(separator: ", ")) FROM \(check.table) WHERE \(check.condition) FOR UPDATE",
                                                     check.key)
                    guard let row = found.rows.first else { conflicts.append("\(unit.object) was deleted by another session"); continue }
                    for (i, column) in check.columns.enumerated() {
                        let now = PostgresDatabase.value(row[i], type: found.types[i])
                        if now != check.loaded[i] {
                            conflicts.append("\(unit.object).\(column) is \(ValueFormatter.plain(now)) in the database, \(ValueFormatter.plain(check.loaded[i])) when loaded")
                            break
                        }
                    }
                } else if let check = unit.mustBeNew {
                    if try !connection.query("SELECT 1 FROM \(check.table) WHERE \(check.condition)", check.key).rows.isEmpty {
                        conflicts.append("\(unit.object) exists in the database already (another session inserted it)")
                    }
                }
            }
            try refuse(conflicts, server: connection.server)
            for unit in plan.units {
                try executeOne(unit.sql, unit.parameters, display: unit.display, on: connection)
            }
            return plan.units.count
        }
    }

    /// Runs `body` (which returns how many statements it wrote) in one `READ WRITE` transaction on
    /// a connection of its own, committed when it returns; any error rolls everything back and is
    /// reported as a failed write that leaves the edits pending.
    static func inWriteTransaction(_ pending: PendingChanges, url: String, _ body: (PostgresConnection) throws -> Int) throws -> StoreCommit.Report {
        let started = DispatchTime.now()
        let connection: PostgresConnection
        do { connection = try PostgresConnection(url: url) } catch let error as PostgresError {
            throw PostgresError(server: error.server, reason: "\(error.reason); nothing was written, your edits stay pending", writing: true)
        }
        var statements = 0
        _ = try connection.query("BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE")
        do {
            statements = try body(connection)
            _ = try connection.query("COMMIT")
        } catch let error as PostgresError {
            _ = try? connection.query("ROLLBACK")
            throw PostgresError(server: error.server, reason: error.reason.contains("nothing was written") ? error.reason
                                : "\(error.reason); nothing was written, your edits stay pending", writing: true)
        } catch {
            _ = try? connection.query("ROLLBACK")
            throw error
        }
        return StoreCommit.Report(pending.changes, statements: statements, seconds: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
    }

    /// Throws the refusal that names what another session changed, when anything did.
    static func refuse(_ conflicts: [String], server: String) throws {
        guard !conflicts.isEmpty else { return }
        throw PostgresError(server: server, reason: "the database changed since it was loaded; nothing was written. Changed: "
                            + conflicts.prefix(8).joined(separator: "; ") + (conflicts.count > 8 ? "; …" : "")
                            + ". Reload (your edits stay pending) and commit again")
    }

    /// Runs one statement that must change exactly one row.
    static func executeOne(_ sql: String, _ parameters: [String?], display: String, on connection: PostgresConnection) throws {
        let affected = try connection.execute(sql, parameters)
        guard affected == 1 else {
            throw PostgresError(server: connection.server, reason: "\(display) changed \(affected) rows, not one; nothing was written, your edits stay pending")
        }
    }

    /// The plan for `pending` over tables `described` (each type's table found by its name).
    static func plan(_ pending: PendingChanges, described: [PostgresDatabase.Described], server: String) throws -> Plan {
        let staged = pending.graph, base = pending.base, changes = pending.changes
        let tables = Dictionary(described.map { ($0.relation.name, $0) }, uniquingKeysWith: { a, _ in a })
        let order = dependencyOrder(described)
        var creates: [(Int, Plan.Unit)] = [], updates: [Plan.Unit] = [], deletes: [(Int, Plan.Unit)] = []
        for ref in changes.touched {
            let table = staged.table(ref)
            let isNew = changes.isInserted(ref), isGone = changes.isRemoved(ref)
            if isNew && isGone { continue }
            let identity = staged.identity(of: ref)
            guard let d = tables[table.name.rawValue], !d.relation.isView, !d.keys.isEmpty else {
                throw PostgresError(server: server, reason: "\(identity): its table has no primary key in the database now; nothing was written")
            }
            let keyValues = keyParameters(staged.id(of: ref))
            guard keyValues.count == d.keys.count else { throw PostgresError(server: server, reason: "\(identity): its key does not fit the table's; nothing was written") }
            let row = Int(ref.row)
            func type(of column: String) -> String { d.columns.first { $0.name == column }?.type ?? "text" }
            let given = changes.changedAttributes(of: ref).compactMap { name in table.attributeIndex[name].map { ($0, table.attributes[$0]) } }
                .sorted { $0.0 < $1.0 }
            let position = order[d.relation.name] ?? 0
            if isNew {
                let columns = given.map { $0.1.name }
                let values = given.map { parameter(table.value(row: row, attribute: $0.0), type: type(of: $0.1.name)) }
                let sql = columns.isEmpty ? "INSERT INTO \(d.relation.sqlName) DEFAULT VALUES"
                    : "INSERT INTO \(d.relation.sqlName) (\(columns.map(SQL.identifier).joined(separator: ", "))) VALUES (\(columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")))"
                let key = keyCondition(d.keys, from: 1)
                creates.append((position, Plan.Unit(object: identity, kind: .create, sql: sql, parameters: values,
                                                    display: display(sql, values, types: columns.map(type(of:))), check: nil,
                                                    mustBeNew: Plan.Check(table: d.relation.sqlName, condition: key, key: keyValues, columns: [], loaded: []))))
                continue
            }
            // An existing row: what it held when loaded, every column read.
            let baseTable = base.types[table.index]
            let stored = d.columns.map(\.name).filter { baseTable.attributeIndex[$0] != nil }
            let check = Plan.Check(table: d.relation.sqlName, condition: keyCondition(d.keys, from: 1), key: keyValues, columns: stored,
                                   loaded: stored.map { baseTable.value(row: row, named: $0) })
            if isGone {
                let sql = "DELETE FROM \(d.relation.sqlName) WHERE \(keyCondition(d.keys, from: 1))"
                deletes.append((position, Plan.Unit(object: identity, kind: .delete, sql: sql, parameters: keyValues,
                                                    display: display(sql, keyValues, types: d.keys.map(type(of:))), check: check, mustBeNew: nil)))
                continue
            }
            guard !given.isEmpty else { continue }
            let values = given.map { parameter(table.value(row: row, attribute: $0.0), type: type(of: $0.1.name)) }
            let sql = "UPDATE \(d.relation.sqlName) SET " + given.enumerated().map { "\(SQL.identifier($0.element.1.name)) = $\($0.offset + 1)" }.joined(separator: ", ")
                + " WHERE " + keyCondition(d.keys, from: given.count + 1)
            updates.append(Plan.Unit(object: identity, kind: .update, sql: sql, parameters: values + keyValues,
                                     display: display(sql, values + keyValues, types: given.map { type(of: $0.1.name) } + d.keys.map(type(of:))),
                                     check: check, mustBeNew: nil))
        }
        var plan = Plan()
        // Parents before children for inserts, children before parents for deletes.
        plan.units = creates.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
            + updates
            + deletes.enumerated().sorted { ($0.element.0, -$0.offset) > ($1.element.0, -$1.offset) }.map(\.element.1)
        return plan
    }

    /// Each table's place in an order where a table comes after the tables its foreign keys
    /// point at (a cycle is cut where it closes).
    static func dependencyOrder(_ described: [PostgresDatabase.Described]) -> [String: Int] {
        let byName = Dictionary(described.map { ($0.relation.name, $0) }, uniquingKeysWith: { a, _ in a })
        var order: [String: Int] = [:], visiting = Set<String>()
        func visit(_ name: String) {
            guard order[name] == nil, !visiting.contains(name), let d = byName[name] else { return }
            visiting.insert(name)
            for fk in d.foreignKeys where fk.table != name { visit(fk.table) }
            visiting.remove(name)
            order[name] = order.count
        }
        for d in described { visit(d.relation.name) }
        return order
    }

    /// `"k1" = $n AND "k2" = $n+1 …`.
    static func keyCondition(_ keys: [String], from first: Int) -> String {
        keys.enumerated().map { "\(SQL.identifier($0.element)) = $\(first + $0.offset)" }.joined(separator: " AND ")
    }

    /// A key's parts as text parameters.
    static func keyParameters(_ id: ObjectID) -> [String?] {
        if case .composite(let parts) = id { return parts.map(keyText) }
        return [keyText(id)]
    }

    /// A key of one column as the text parameter PostgreSQL reads (nil for a composite key).
    static func keyText(_ id: ObjectID) -> String? {
        switch id {
        case .int(let i): return String(i)
        case .double(let d): return number(d)
        case .string(let s): return s
        case .data(let d): return "\\x" + d.map { String(format: "%02x", $0) }.joined()
        case .composite: return nil
        }
    }

    /// A value as the text PostgreSQL reads for a column of `type` (as `format_type` names it);
    /// nil for NULL. Dates are written in UTC (a `timestamp` without zone is read back as UTC).
    static func parameter(_ value: Value, type: String) -> String? {
        if type == "json" || type == "jsonb" { return value.isNull ? nil : ValueFormatter.json(value) }   // a string as a JSON string
        switch value {
        case .null: return nil
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return number(d)
        case .decimal(let d): return d.text
        case .string(let s): return s
        case .date(let date):
            let text = DateText.sqlite(date, dateOnly: type == "date")
            return type.hasSuffix("with time zone") ? text + "+00" : text
        case .data(let d): return "\\x" + d.map { String(format: "%02x", $0) }.joined()
        case .array, .object: return ValueFormatter.json(value)
        case .reference: return nil   // never in a column: relation edits set the foreign key's column
        }
    }

    /// A floating-point number as PostgreSQL reads it back exactly.
    static func number(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d > 0 ? "Infinity" : "-Infinity" }
        return "\(d)"
    }

    /// The statement with each `$n` replaced by its value as a literal (`'text'`, numbers,
    /// `NULL`), cast to the column's type where text would not say it. One pass: a `$n` inside a
    /// quoted identifier, or inside a value already written in, stays as it is.
    static func display(_ sql: String, _ values: [String?], types: [String]) -> String {
        func literal(_ i: Int) -> String {
            guard i < values.count, let value = values[i] else { return "NULL" }
            let type = i < types.count ? types[i] : "text"
            let quoted = "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
            let numeric = ["integer", "bigint", "smallint", "real", "double precision", "oid"].contains(type) || type.hasPrefix("numeric")
            if numeric, Double(value) != nil { return value }
            return type.hasPrefix("character") || type == "text" ? quoted : quoted + "::" + type
        }
        var out = "", inIdentifier = false
        var characters = Array(sql)[...]
        while let c = characters.popFirst() {
            if c == "\"" { inIdentifier.toggle() }
            if c == "$", !inIdentifier, let first = characters.first, first.isASCII, first.isNumber {
                var digits = ""
                while let d = characters.first, d.isASCII, d.isNumber { digits.append(d); characters.removeFirst() }
                out += literal(Int(digits)! - 1)
                continue
            }
            out.append(c)
        }
        return out + ";"
    }
}

/// The store under a session when it is a PostgreSQL database: loads it, previews and commits
/// its pending changes through ``PostgresCommit``. `.open` of another database's URL moves the
/// host to that database (what is previewed and committed is always the one last loaded); a file
/// is opened by `loupe FILE`, not from here.
public final class PostgresHost: SessionHost {
    /// The database's URL (with its password, to connect; never shown).
    private let url: Mutex<String>

    public init(url: String) { self.url = Mutex(url) }

    public func load(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        guard PostgresConnection.isURL(path) else {
            throw PostgresError(server: url.withLock { PostgresConnection.withoutPassword($0) },
                                reason: "this session reads a PostgreSQL database; open a file with `loupe FILE`")
        }
        let graph = try PostgresDatabase.load(url: path).graph
        url.withLock { $0 = path }
        return graph
    }

    public func read(path: String, progress: ProgressReport?) throws -> ObjectGraph {
        try PostgresDatabase.load(url: path).graph
    }

    public func preview(_ pending: PendingChanges, maxLines: Int) throws -> String {
        let current = url.withLock { $0 }
        if pending.base.formatName == PostgresPersist.formatName { return try PostgresPersistCommit.preview(pending, url: current, maxLines: maxLines) }
        return try PostgresCommit.preview(pending, url: current).description(maxLines: maxLines)
    }

    public func commit(_ pending: PendingChanges, progress: ProgressReport?) throws -> (graph: ObjectGraph, summary: String) {
        let current = url.withLock { $0 }
        let report = pending.base.formatName == PostgresPersist.formatName
            ? try PostgresPersistCommit.commit(pending, url: current) : try PostgresCommit.commit(pending, url: current)
        return (try load(path: current, progress: progress), report.summary)
    }
}
