import Foundation
import LoupeModel
import LoupeStore

/// A PostgreSQL database read as an object graph, as a relational SQLite file is
/// (``RelationalFormat``): each table, view and materialized view the user may read is a type
/// (named `table` in `public`, `schema.table` elsewhere), each row an object keyed by its primary
/// key (the values of a composite key in key order; row number when there is none), each column an
/// attribute, each declared single-column foreign key a to-one relation named as in a SQLite file
/// (`AlbumId` → `Album`, the column's name reaching it too), with backlinks. Values keep their
/// kinds: integers, floating and `numeric` as numbers, booleans, `date`/`timestamp[tz]` as dates,
/// `bytea` as data, `json`/`jsonb` as nested values (paths reach into them), everything else as
/// text. Everything is read in one read-only snapshot; edits are written by ``PostgresCommit``.
public enum PostgresDatabase {
    public static let formatName = "PostgreSQL"


    /// Connects to `url` and reads the whole database (Persist's layout as Persist's graph,
    /// ``PostgresPersist``).
    public static func load(url: String) throws -> LoadedGraph {
        let connection = try PostgresConnection(url: url)
        return try connection.snapshot { try PostgresPersist.isPersist(connection) ? PostgresPersist.load(connection) : load(connection) }
    }

    /// True when the database holds Persist's layout (`by_type`, `relations`) rather than tables to browse.
    public static func holdsPersist(url: String) throws -> Bool {
        let connection = try PostgresConnection(url: url)
        return try connection.snapshot { try PostgresPersist.isPersist(connection) }
    }

    /// Every readable relation with its object count, without reading rows (`loupe types`).
    public static func catalog(url: String) throws -> [(name: String, count: Int)] {
        let connection = try PostgresConnection(url: url)
        return try connection.snapshot {
            if try PostgresPersist.isPersist(connection) { return try PostgresPersist.catalog(connection) }
            return try relations(connection).map { relation in
                let n = try connection.query("SELECT count(*) FROM \(relation.sqlName)").rows.first?.first.flatMap { $0.flatMap { Int($0) } }
                return (relation.name, n ?? 0)
            }
        }
    }

    /// The bytes the readable tables' rows take on the server (`pg_table_size`: heap, TOAST and
    /// free-space maps, no indexes): what a whole load's size is estimated from.
    public static func storedBytes(url: String) throws -> Int64 {
        let connection = try PostgresConnection(url: url)
        return try connection.snapshot {
            let oids = try relations(connection).filter { !$0.isView }.map(\.oid)
            guard !oids.isEmpty else { return 0 }
            let sum = try connection.query("SELECT coalesce(sum(pg_table_size(oid)), 0)::text FROM unnest($1::oid[]) AS oid",
                                           ["{" + oids.joined(separator: ",") + "}"]).rows.first?.first
            return sum.flatMap { $0.flatMap { Int64($0) } } ?? 0
        }
    }

    struct Relation: Sendable {
        let oid: String
        let name: String
        let sqlName: String
        let isView: Bool
    }

    /// Tables, then views, in the order a person would list them: `public` first.
    static func relations(_ c: PostgresConnection) throws -> [Relation] {
        try c.query("""
            SELECT c.oid::text, n.nspname, c.relname, c.relkind IN ('v', 'm')
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition
              AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
              AND has_table_privilege(c.oid, 'SELECT')
            ORDER BY c.relkind IN ('v', 'm'), n.nspname <> 'public', n.nspname, c.relname
            """).rows.compactMap { row in
            guard let oid = row[0], let schema = row[1], let table = row[2] else { return nil }
            return Relation(oid: oid, name: schema == "public" ? table : "\(schema).\(table)",
                            sqlName: SQL.identifier(schema) + "." + SQL.identifier(table), isView: row[3] == "t")
        }
    }

    /// What the catalog says of one table or view.
    struct Described: Sendable {
        let relation: Relation
        /// Each column: its name, its declared type as PostgreSQL formats it, whether it is `NOT
        /// NULL`, and the OID of the type its values are sent as (a domain's base type, as the
        /// server sends it; 0 for a domain nested deeper than Loupe looks).
        let columns: [(name: String, type: String, notNull: Bool, base: UInt32)]
        let keys: [String]
        let foreignKeys: [DeclaredForeignKey]
    }

    /// Reads the whole database; with `schemaOnly`, no row (types, attributes, relations).
    static func load(_ c: PostgresConnection, schemaOnly: Bool = false) throws -> LoadedGraph {
        let builder = GraphBuilder(formatName: formatName)
        var warnings: [String] = []
        var tables: [KeyedTable] = []
        for described in try describeAll(c) {
            let t = addType(described, to: builder)
            if !schemaOnly {
                do {
                    try readRows(c, described, type: t, into: builder)
                } catch let error as PostgresError {
                    warnings.append("\(described.relation.name): cannot read its rows (\(error.reason))")
                }
            }
            tables.append(keyedTable(described, type: t))
        }
        RelationalFormat.linkForeignKeys(builder, tables, warnings: &warnings)
        return LoadedGraph(graph: builder.finish(), warnings: warnings)
    }

    /// Every readable table and view with its columns, key and foreign keys.
    static func describeAll(_ c: PostgresConnection) throws -> [Described] {
        var out: [Described] = []
        for relation in try relations(c) {
            let columns = try c.query("""
                SELECT attname, format_type(atttypid, atttypmod), attnotnull,
                       CASE WHEN t.typtype <> 'd' THEN t.oid WHEN b.typtype <> 'd' THEN b.oid WHEN bb.typtype <> 'd' THEN bb.oid ELSE 0 END
                FROM pg_attribute JOIN pg_type t ON t.oid = atttypid
                LEFT JOIN pg_type b ON b.oid = t.typbasetype LEFT JOIN pg_type bb ON bb.oid = b.typbasetype
                WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped ORDER BY attnum
                """, [relation.oid]).rows.compactMap { row -> (name: String, type: String, notNull: Bool, base: UInt32)? in
                guard let name = row[0] else { return nil }
                return (name, row[1] ?? "", row[2] == "t", row[3].flatMap { UInt32($0) } ?? 0)
            }
            let keys = try c.query("""
                SELECT a.attname FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                WHERE i.indrelid = $1::oid AND i.indisprimary ORDER BY k.ord
                """, [relation.oid]).rows.compactMap { $0[0] }
            let foreignKeys = try c.query("""
                SELECT a.attname, fn.nspname, fc.relname, fa.attname, con.confdeltype
                FROM pg_constraint con
                JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = con.conkey[1]
                JOIN pg_class fc ON fc.oid = con.confrelid JOIN pg_namespace fn ON fn.oid = fc.relnamespace
                JOIN pg_attribute fa ON fa.attrelid = con.confrelid AND fa.attnum = con.confkey[1]
                WHERE con.contype = 'f' AND con.conrelid = $1::oid AND array_length(con.conkey, 1) = 1
                ORDER BY con.conname
                """, [relation.oid]).rows.compactMap { row -> DeclaredForeignKey? in
                guard let column = row[0], let schema = row[1], let table = row[2] else { return nil }
                let action: DeleteAction = ["r": .restrict, "c": .cascade, "n": .setNull, "d": .setDefault][row[4] ?? ""] ?? .noAction
                return DeclaredForeignKey(column: column, table: schema == "public" ? table : "\(schema).\(table)", target: row[3], onDelete: action)
            }
            out.append(Described(relation: relation, columns: columns, keys: keys, foreignKeys: foreignKeys))
        }
        return out
    }

    /// What ``RelationalFormat/linkForeignKeys(_:_:warnings:)`` links of `d`, whose type is `t`
    /// (a view's rows have no key and name nothing).
    static func keyedTable(_ d: Described, type t: Int) -> KeyedTable {
        KeyedTable(name: d.relation.name, type: t, columns: d.columns.map(\.name), keyColumns: d.relation.isView ? [] : d.keys,
                   foreignKeys: d.relation.isView ? [] : d.foreignKeys)
    }

    /// Adds every type of `described` to `builder` (type `i` is `described[i]`) and returns the
    /// tables ``RelationalFormat/linkForeignKeys(_:_:warnings:)`` links.
    static func addTypes(_ described: [Described], to builder: GraphBuilder) -> [KeyedTable] {
        described.map { keyedTable($0, type: addType($0, to: builder)) }
    }

    /// The types of `described` with their attributes and relations, as a load makes them, no rows.
    static func schemaGraph(_ described: [Described]) -> ObjectGraph {
        let builder = GraphBuilder(formatName: formatName)
        var warnings: [String] = []
        RelationalFormat.linkForeignKeys(builder, addTypes(described, to: builder), warnings: &warnings)
        return builder.finish()
    }

    /// The key a row's key columns make, read as PostgreSQL wrote them (`texts`, of type OIDs
    /// `types`), as a load makes it; nil when a part is a value a load does not key by (a date:
    /// a load numbers such rows instead).
    static func key(_ texts: some Collection<String?>, types: some Collection<UInt32>) -> ObjectID? {
        var parts: [ObjectID] = []
        for (text, type) in zip(texts, types) {
            guard let part = ObjectID(keyValue: value(text, type: type)) else { return nil }
            parts.append(part)
        }
        return parts.count == 1 ? parts[0] : .composite(parts)
    }

    /// The type a table becomes, with its attributes, and no rows yet.
    static func addType(_ d: Described, to builder: GraphBuilder) -> Int {
        let relation = d.relation, keys = d.keys
        let policy: KeyPolicy = relation.isView || keys.isEmpty ? .rowNumber : keys.count == 1 ? .column(keys[0], autoIncrements: false) : .columns(keys)
        // Tables with a primary key are edited (``PostgresCommit``); a view's rows are computed,
        // and a table without a key has no way to name the one row a write means.
        let readOnly = relation.isView ? TypeTable.viewReason(relation.name)
            : keys.isEmpty ? "\(relation.name) has no primary key; its rows cannot be told apart for a write" : nil
        let t = builder.type(relation.name, readOnlyReason: readOnly, keyPolicy: policy)
        for column in d.columns {
            var storage = ColumnStorage(declaredType: column.type, isPrimaryKey: keys.contains(column.name), notNull: column.notNull)
            (storage.declaredAffinity, storage.holdsJSON) = affinity(of: column.type)
            _ = builder.attribute(column.name, of: t, storage: storage)
        }
        return t
    }

    /// What an edit may put in a column of a PostgreSQL type (as `format_type` names it):
    /// integers in the integer types, numbers in the others that hold numbers, numbers and
    /// booleans in `boolean`, bytes in `bytea`, anything in `json`/`jsonb`, text in everything else
    /// (`text`, `varchar`, `uuid`, enums… PostgreSQL checks the text itself). Dates go where the
    /// type says date or timestamp (the editor checks those by name first).
    static func affinity(of type: String) -> (ColumnStorage.Affinity, holdsJSON: Bool) {
        switch type {
        case "smallint", "integer", "bigint", "oid": return (.integer, false)
        case "real", "double precision": return (.real, false)
        case "boolean": return (.numeric, false)
        case "bytea": return (.blob, false)
        case "json", "jsonb": return (.blob, true)
        default: return (type.hasPrefix("numeric") ? .numeric : .text, false)
        }
    }

    /// Reads a table's rows into its type, in key order: all of them, or those `condition`
    /// (SQL over the table's columns, with `parameters` bound) selects. Of the rows `thin.condition`
    /// (SQL too) selects, only the key's columns and `thin.columns` are read (the others stay
    /// unset, as a window's backlink sources are); `tail` replaces the key order (an order, an offset and
    /// a limit: rows by position), the first row read then being row `firstOrdinal + 1` of a type
    /// keyed by row number.
    static func readRows(_ c: PostgresConnection, _ d: Described, type t: Int, into builder: GraphBuilder,
                         condition: String? = nil, parameters: [String?] = [], thin: (condition: String, columns: Set<String>)? = nil,
                         tail: String? = nil, firstOrdinal: Int = 0) throws {
        let relation = d.relation, keys = d.keys, columns = d.columns
        let order = tail ?? (keys.isEmpty ? "" : " ORDER BY " + keys.map(SQL.identifier).joined(separator: ", "))
        /// True for the columns a thin row has.
        let kept = columns.map { keys.contains($0.name) || thin?.columns.contains($0.name) == true }
        var list = columns.indices.map { i in
            thin == nil || kept[i] ? SQL.identifier(columns[i].name) : "CASE WHEN \(thin!.condition) THEN NULL ELSE \(SQL.identifier(columns[i].name)) END"
        }
        if let thin { list.append("(\(thin.condition))") }
        let result = try c.query("SELECT \(list.isEmpty ? "NULL" : list.joined(separator: ", ")) FROM \(relation.sqlName)"
                                 + (condition.map { " WHERE \($0)" } ?? "") + order, parameters)
        add(result, of: d, type: t, into: builder, kept: thin == nil ? nil : kept) { firstOrdinal + $0 + 1 }
    }

    /// Adds the rows `result` read of `d` (its columns, then with `kept`, a column saying the row
    /// is thin: only the `kept` columns set) to type `t`, the `i`th numbered `ordinal(i)` where
    /// a load numbers them.
    private static func add(_ result: PostgresConnection.Rows, of d: Described, type t: Int, into builder: GraphBuilder, from first: Int = 0,
                            kept: [Bool]?, ordinal: (Int) -> Int) {
        let columns = d.columns
        let slots = columns.map { builder.existingAttribute($0.name, of: t)! }
        let keyPositions = d.keys.compactMap { k in columns.firstIndex { $0.name == k } }
        for (i, row) in result.rows.enumerated() {
            let values = row[first..<(first + columns.count)].enumerated().map { value($0.element, type: result.types[first + $0.offset]) }
            let id = objectID(values, keyPositions: keyPositions, isView: d.relation.isView, ordinal: ordinal(i))
            let ref = builder.addObject(type: t, id: id)
            let isThin = kept != nil && row[first + columns.count] == "t"
            for (j, slot) in slots.enumerated() where !isThin || kept![j] { builder.set(values[j], type: t, row: Int(ref.row), attribute: slot) }
        }
    }

    /// True when a load numbers `d`'s rows (1, 2, … in the order it reads them) rather than
    /// keying them by their values: a view, a table without a primary key, a table keyed by one
    /// column whose values are no keys (a date, JSON).
    static func isNumbered(_ d: Described) -> Bool {
        d.relation.isView || d.keys.isEmpty || d.keys.count == 1 && !PostgresPages.keysAreValues(d)
    }

    /// `d`'s rows each with its number as a load numbers them (``isNumbered(_:)``), as SQL to
    /// read `FROM` (a derived table to alias), and the name of the number's column (one no
    /// column of `d` has).
    static func numbered(_ d: Described) -> (from: String, position: String) {
        var position = "loupe position"
        while d.columns.contains(where: { $0.name == position }) { position += "'" }
        if !d.relation.isView, d.keys.isEmpty {
            // Physical order: the row addresses numbered (a sort of addresses alone, not of whole
            // rows), the rows found by address (a partition's addresses repeat in the others').
            return ("(SELECT n.p AS \(SQL.identifier(position)), t.* FROM (SELECT tableoid AS o, ctid AS c, row_number() OVER (ORDER BY ctid) AS p FROM \(d.relation.sqlName)) n"
                    + " JOIN \(d.relation.sqlName) t ON t.tableoid = n.o AND t.ctid = n.c)", position)
        }
        return ("(SELECT row_number() OVER (\(PostgresPages.positionOrder(d))) AS \(SQL.identifier(position)), * FROM \(d.relation.sqlName))", position)
    }

    /// `d` as SQL reaches its rows by key: itself, or, when a load numbers them, its rows
    /// numbered (a derived table, ``numbered(_:)``) with that number as their one key column
    /// (`bigint`) before `d`'s columns.
    static func keyedByNumber(_ d: Described) -> Described {
        guard isNumbered(d) else { return d }
        let (from, position) = numbered(d)
        return Described(relation: Relation(oid: d.relation.oid, name: d.relation.name, sqlName: from, isView: false),
                         columns: [(position, "bigint", true, 20)] + d.columns, keys: [position], foreignKeys: d.foreignKeys)
    }

    /// Reads the rows of `d` (a type a load numbers) numbered `positions` into type `t`, each
    /// with its number as its key, in that order.
    static func readRows(_ c: PostgresConnection, _ d: Described, type t: Int, into builder: GraphBuilder, positions: [Int64]) throws {
        guard !positions.isEmpty else { return }
        let position = numbered(d).position
        try readNumberedRows(c, d, type: t, into: builder, condition: "\(SQL.identifier(position)) = ANY($1::bigint[])",
                             parameters: [PostgresPersistPages.keyArray(positions)])
    }

    /// Reads the rows of `d` (a type a load numbers) that `condition` (SQL over its columns and
    /// its number's column, with `parameters` bound) selects into type `t`, each with the number
    /// a load gives it as its key, in that order.
    static func readNumberedRows(_ c: PostgresConnection, _ d: Described, type t: Int, into builder: GraphBuilder,
                                 condition: String, parameters: [String?]) throws {
        let (from, position) = numbered(d)
        let list = ([position] + d.columns.map(\.name)).map(SQL.identifier).joined(separator: ", ")
        let result = try c.query("SELECT \(list) FROM \(from) q WHERE \(condition) ORDER BY 1", parameters)
        let numbers = result.rows.map { $0[0].flatMap { Int($0) } ?? 0 }
        add(result, of: d, type: t, into: builder, from: 1, kept: nil) { numbers[$0] }
    }

    /// The key of a row whose values are `values` as a load makes it: the key column's value, the
    /// key columns' values (composite), or the row's number `ordinal` (views, tables without one).
    static func objectID(_ values: [Value], keyPositions: [Int], isView: Bool, ordinal: Int) -> ObjectID {
        if keyPositions.count == 1, !isView, let key = ObjectID(keyValue: values[keyPositions[0]]) { return key }
        if keyPositions.count > 1, !isView { return .composite(keyPositions.map { ObjectID(keyValue: values[$0]) ?? .string("") }) }
        return .int(Int64(ordinal))
    }

    /// A value in PostgreSQL's text form, by its column's type OID.
    static func value(_ text: String?, type: UInt32) -> Value {
        guard let text else { return .null }
        switch type {
        case 16: return .bool(text == "t")
        case 20, 21, 23, 26: return Int64(text).map(Value.int) ?? .string(text)
        case 700, 701: return Double(text).map(Value.double) ?? .string(text)
        case 1700: return ExactDecimal.value(text) ?? .string(text)   // numeric: every digit kept
        case 1082, 1114, 1184: return DateText.parse(text).map(Value.date) ?? .string(text)
        case 17:
            // bytea's hex form: `\x0aff…`.
            guard text.hasPrefix("\\x") else { return .string(text) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity((text.utf8.count - 2) / 2)
            var high: UInt8?
            for c in text.utf8.dropFirst(2) {
                guard let nibble = hexValue(c) else { return .string(text) }
                if let h = high { bytes.append(h << 4 | nibble); high = nil } else { high = nibble }
            }
            return .data(Data(bytes))
        case 114, 3802: return (try? JSONReader.parse(text, persistDates: false)) ?? .string(text)
        default: return .string(text)
        }
    }

    /// True when values of type `oid` (as sent) are read as the text PostgreSQL writes them
    /// (``value(_:type:)``'s last case: uuids, enums, arrays, intervals, times, …) and `::text`
    /// gives that same text, so SQL compares, sorts and groups them as the engine does. Not
    /// `character(n)`, `inet` and `cidr`, whose casts to text differ from their output (padding
    /// dropped, a netmask added), nor a type Loupe reads otherwise.
    static func readsAsItsText(_ oid: UInt32) -> Bool {
        guard oid != 0 else { return false }
        switch oid {
        case 16, 20, 21, 23, 26, 700, 701, 1700, 1082, 1114, 1184, 17, 114, 3802, 1042, 869, 650: return false
        default: return true
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}

extension PostgresDatabase {
    /// One object with what `loupe show` prints of it, read by key lookups instead of a load: its
    /// row, the rows its foreign keys name, the rows whose foreign keys name it, in a graph with
    /// every type of the database (so relations and backlink groups come out as a whole load
    /// gives them). `ids` are the keys the object may have (``ObjectID/candidates(typed:)``).
    /// Nil when the type is unknown, a view, or has no single-column key a load keys by (then
    /// `show` loads); no object when no row can have any of `ids`.
    public static func neighbourhood(url: String, type name: String, ids: [ObjectID]) throws -> (graph: ObjectGraph, ref: ObjectRef?)? {
        let c = try PostgresConnection(url: url)
        return try c.snapshot { () throws -> (graph: ObjectGraph, ref: ObjectRef?)? in
            if try PostgresPersist.isPersist(c) { return nil }   // Persist's types are in its documents: `show` loads
            let described = try describeAll(c)
            // Names resolve as in a loaded graph: exact, else the one case-insensitive match.
            let names = described.map(\.relation.name)
            let matches = names.filter { $0.caseInsensitiveCompare(name) == .orderedSame }
            guard let rootName = names.contains(name) ? name : matches.count == 1 ? matches[0] : nil,
                  let root = described.first(where: { $0.relation.name == rootName }), !root.relation.isView, root.keys.count == 1,
                  PostgresPages.keysAreValues(root) else { return nil }
            func columnType(_ d: Described, _ column: String) -> String? { d.columns.first { $0.name == column }?.type }
            // Which rows to read, per table: columns and the values (as text, cast to the
            // column's type in the query) any of which selects a row; each row is read once.
            var wanted: [String: [(column: String, values: Set<String>)]] = [:]
            let rootKey = root.keys[0]
            let rootType = (columnType(root, rootKey) ?? "").lowercased()
            // The keys the object may have, as the key column's text (those no row has left out).
            let rootKeys = Set(ids.compactMap { PostgresPages.keyText($0, type: rootType) })
            guard !rootKeys.isEmpty else { return (schemaGraph(described), nil) }
            func placeholders(_ count: Int, from start: Int, type: String) -> String {
                (0..<count).map { "$\(start + $0 + 1)::\(type)" }.joined(separator: ", ")
            }
            /// A column compared with values of its type: as itself (its index serves), or as the
            /// text a load reads (an enum, a type whose input reads spellings it never writes).
            func compared(_ d: Described, _ column: String) -> (sql: String, type: String)? {
                guard let type = columnType(d, column) else { return nil }
                return PostgresPages.comparesTyped(type) ? (SQL.identifier(column), type) : (SQL.identifier(column) + "::text", "text")
            }
            guard let key = compared(root, rootKey) else { return nil }
            wanted[root.relation.name, default: []].append((rootKey, rootKeys))
            /// The root rows' values of `column`.
            func rootValues(_ column: String) throws -> Set<String> {
                Set(try c.query("SELECT \(SQL.identifier(column)) FROM \(root.relation.sqlName) WHERE \(key.sql) IN ("
                                + placeholders(rootKeys.count, from: 0, type: key.type) + ")", Array(rootKeys)).rows.compactMap { $0[0] })
            }
            // What the root rows name: the targets' rows whose referenced column holds the value.
            for fk in root.foreignKeys {
                guard let target = described.first(where: { $0.relation.name == fk.table }), let referenced = fk.target ?? (target.keys.count == 1 ? target.keys[0] : nil) else { continue }
                let values = try rootValues(fk.column)
                if !values.isEmpty { wanted[target.relation.name, default: []].append((referenced, values)) }
            }
            // What names the root rows: every table's rows whose foreign key holds the root's key,
            // or the root's value of the (unique) column it names.
            for source in described where !source.relation.isView {
                for fk in source.foreignKeys where fk.table == root.relation.name {
                    let values = fk.target == nil || fk.target == rootKey ? rootKeys : try rootValues(fk.target!)
                    if !values.isEmpty { wanted[source.relation.name, default: []].append((fk.column, values)) }
                }
            }
            let builder = GraphBuilder(formatName: formatName)
            var tables: [KeyedTable] = []
            for d in described {
                let t = addType(d, to: builder)
                if let selections = wanted[d.relation.name] {
                    var parameters: [String?] = [], parts: [String] = []
                    for (column, values) in selections {
                        guard let (sql, type) = compared(d, column) else { continue }
                        parts.append("\(sql) IN (\(placeholders(values.count, from: parameters.count, type: type)))")
                        parameters += values.map { Optional($0) }
                    }
                    // (Rows a load numbers keep the numbers it gives them.)
                    if !parts.isEmpty, isNumbered(d) {
                        try readNumberedRows(c, d, type: t, into: builder, condition: parts.joined(separator: " OR "), parameters: parameters)
                    } else if !parts.isEmpty {
                        try readRows(c, d, type: t, into: builder, condition: parts.joined(separator: " OR "), parameters: parameters)
                    }
                }
                tables.append(keyedTable(d, type: t))
            }
            var warnings: [String] = []
            RelationalFormat.linkForeignKeys(builder, tables, warnings: &warnings)
            let graph = builder.finish()
            guard let type = graph.type(named: rootName) else { return nil }
            return (graph, ids.lazy.compactMap { graph.ref(type: type, id: $0) }.first)
        }
    }
}
