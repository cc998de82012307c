import Foundation
import GRDB

/// A PostgreSQL server for tests: the one `LOUPE_TEST_POSTGRES` names (`.ci/run` starts a
/// throwaway cluster on loopback and sets it), else one started here from Debian's `postgresql`
/// package (a cluster in a temp folder, on a free port, stopped and removed when the tests end).
/// The databases tests make on a server they did not start are dropped when the tests end.
public enum PostgresServer {
    /// The server's URL (`postgresql://postgres@127.0.0.1:PORT/postgres`), or an error saying
    /// what is missing.
    public static func url() throws -> String {
        try started.get()
    }

    private static let started: Result<String, Error> = Result {
        if let url = ProcessInfo.processInfo.environment["LOUPE_TEST_POSTGRES"], !url.isEmpty { return url }
        return try startCluster()
    }

    struct Missing: Error, CustomStringConvertible { let description: String }

    /// `initdb` and `pg_ctl` from PATH or Debian's versioned folder.
    static func tool(_ name: String) -> String? {
        let fm = FileManager.default
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") where fm.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        let versions = (try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for v in versions.sorted(by: >) where fm.isExecutableFile(atPath: "/usr/lib/postgresql/\(v)/bin/\(name)") {
            return "/usr/lib/postgresql/\(v)/bin/\(name)"
        }
        return nil
    }

    private static func startCluster() throws -> String {
        guard let initdb = tool("initdb"), let pgctl = tool("pg_ctl") else {
            throw Missing(description: "PostgreSQL is not installed (apt-get install postgresql; scripts/bootstrap.sh and .ci/run do), and LOUPE_TEST_POSTGRES is not set")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-pg-\(getpid())").path
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let port = 20000 + Int(getpid() % 20000)
        // PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` user.
        let asRoot = getuid() == 0
        if asRoot { _ = run("chown postgres '\(dir)'") }
        let data = dir + "/data"
        func shell(_ command: String) -> String { asRoot ? "su postgres -s /bin/sh -c '\(command)'" : command }
        let commands = [
            "\(initdb) -D \(data) -A trust -U postgres --no-sync >\(dir)/initdb.log 2>&1",
            "\(pgctl) -D \(data) -o \"-h 127.0.0.1 -p \(port) -k \(dir) -F\" -l \(dir)/server.log -w start </dev/null >/dev/null 2>&1",
        ]
        for command in commands {
            guard run(shell(command)) == 0 else {
                let log = (try? String(contentsOfFile: dir + "/initdb.log", encoding: .utf8)) ?? ""
                throw Missing(description: "could not start a PostgreSQL cluster in \(dir): \(command) failed\n\(log)")
            }
        }
        // Stopped, then the whole cluster removed: a run leaves nothing in the temp folder.
        stopCommand = shell("\(pgctl) -D \(data) -m immediate stop </dev/null >/dev/null 2>&1") + "; rm -rf '\(dir)'"
        atexit { PostgresServer.cleanUp() }
        return "postgresql://postgres@127.0.0.1:\(port)/postgres"
    }

    nonisolated(unsafe) static var stopCommand: String?
    /// The databases ``freshDatabase(_:)`` made on a server these tests did not start.
    nonisolated(unsafe) static var made: Set<String> = []
    static let lock = NSLock()

    /// At exit: the cluster started here stopped and removed, or the databases made on another
    /// server dropped (a shared server does not gather a copy of Chinook per run).
    static func cleanUp() {
        if let command = stopCommand { run(command); return }
        let databases = lock.withLock { made }
        guard !databases.isEmpty, let url = try? url() else { return }
        _ = try? psql(url, databases.sorted().map { "DROP DATABASE IF EXISTS \($0) WITH (FORCE);" }.joined(separator: "\n"))
    }

    /// The server's URL with another database's name.
    public static func url(database: String) throws -> String {
        guard var components = URLComponents(string: try url()) else { throw Missing(description: "not a URL: \(try url())") }
        components.path = "/" + database
        return components.string ?? ""
    }

    /// A new, empty database on the test server (dropped first if a run before left it).
    public static func freshDatabase(_ name: String) throws -> String {
        let database = "loupe_\(name)_\(getpid())"
        try psql(try url(), "DROP DATABASE IF EXISTS \(database); CREATE DATABASE \(database);")
        if stopCommand == nil {
            let first = lock.withLock { made.insert(database).inserted && made.count == 1 }
            if first { atexit { PostgresServer.cleanUp() } }
        }
        return try url(database: database)
    }

    /// Runs a shell command and returns its exit status (`system`, which waits for the shell
    /// alone: a server it starts in the background must not keep the caller waiting).
    @discardableResult
    static func run(_ command: String) -> Int32 {
        let status = system(command)
        return status == -1 ? -1 : (status >> 8) & 0xff
    }

    /// Runs SQL with `psql` on `url` (stopping at the first error); returns its exit status.
    @discardableResult
    public static func psql(_ url: String, _ sql: String) throws -> Int32 {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-psql-\(getpid())-\(UUID().uuidString).sql").path
        try sql.write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        return run("psql -q -v ON_ERROR_STOP=1 -X -f '\(script)' '\(url)' </dev/null >/dev/null 2>&1")
    }

    /// A new database on the test server holding a SQLite file's tables: column types mapped
    /// (integers, reals, `NUMERIC(p,s)`, dates and timestamps, text, blobs), primary keys, and
    /// single-column foreign keys added after the rows. Returns its URL.
    public static func database(copying sqlitePath: String, named name: String) throws -> String {
        let target = try freshDatabase(name)
        var script = "SET client_min_messages = warning;\n"
        var foreignKeys = ""
        let queue = try DatabaseQueue(path: sqlitePath, configuration: { var c = Configuration(); c.readonly = true; return c }())
        try queue.read { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY rowid")
            for table in tables {
                let columns = try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", arguments: [table])
                let keys = columns.filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }.map { $0["name"] as String }
                let definitions = columns.map { c -> String in "\(HostileFiles.q(c["name"])) \(pgType(c["type"]))" }
                    + (keys.isEmpty ? [] : ["PRIMARY KEY (\(keys.map(HostileFiles.q).joined(separator: ", ")))"])
                script += "CREATE TABLE \(HostileFiles.q(table)) (\(definitions.joined(separator: ", ")));\n"
                script += "COPY \(HostileFiles.q(table)) FROM STDIN WITH (FORMAT csv);\n"
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(HostileFiles.q(table))")
                for row in rows {
                    script += row.databaseValues.map(csv).joined(separator: ",") + "\n"
                }
                script += "\\.\n"
                for fk in try Row.fetchAll(db, sql: #"SELECT "table", "from", "to" FROM pragma_foreign_key_list(?)"#, arguments: [table]) {
                    let to: String? = fk["to"]
                    foreignKeys += "ALTER TABLE \(HostileFiles.q(table)) ADD FOREIGN KEY (\(HostileFiles.q(fk["from"]))) REFERENCES \(HostileFiles.q(fk["table"]))"
                        + (to.map { " (\(HostileFiles.q($0)))" } ?? "") + ";\n"
                }
            }
        }
        let status = try psql(target, script + foreignKeys)
        guard status == 0 else { throw Missing(description: "psql could not load \(sqlitePath) into \(target)") }
        return target
    }

    /// A new database holding a Persist file's `by_type`, `relations` and `loupe_relation_kinds`
    /// rows as an app storing Persist's layout in PostgreSQL would: the documents in a column of
    /// `documentType` (`json`, `jsonb` or `text`), `by_type.id` declared `idType` (`bigint`, or
    /// `bigserial`: its sequence is left where `COPY` leaves it, behind the keys), relation rows
    /// numbered in the file's order by an `id` of `relationKey` (`bigserial`, `bigint` with no
    /// default, or nil: no `id` column, physical order).
    public static func persistDatabase(copying sqlitePath: String, named name: String, documentType: String,
                                       idType: String = "bigint", relationKey: String? = "bigserial") throws -> String {
        let target = try freshDatabase(name)
        var script = """
            SET client_min_messages = warning;
            CREATE TABLE by_type (id \(idType) PRIMARY KEY, type_name text NOT NULL, json \(documentType) NOT NULL);
            CREATE TABLE relations (\(relationKey.map { "id \($0) PRIMARY KEY, " } ?? "")from_id bigint NOT NULL, to_id bigint NOT NULL, relation text NOT NULL);
            CREATE TABLE loupe_relation_kinds (type_name text, relation text, to_many integer, PRIMARY KEY (type_name, relation));

            """
        let relationColumns = relationKey == "bigint" ? "rowid, from_id, to_id, relation" : "from_id, to_id, relation"
        let queue = try DatabaseQueue(path: sqlitePath, configuration: { var c = Configuration(); c.readonly = true; return c }())
        try queue.read { db in
            for (table, columns) in [("by_type", "id, type_name, json"), ("relations", relationColumns), ("loupe_relation_kinds", "type_name, relation, to_many")] {
                guard try db.tableExists(table) else { continue }
                script += "COPY \(table) (\(columns.replacingOccurrences(of: "rowid", with: "id"))) FROM STDIN WITH (FORMAT csv);\n"
                for row in try Row.fetchAll(db, sql: "SELECT \(columns) FROM \(table) ORDER BY rowid") {
                    script += row.databaseValues.map(csv).joined(separator: ",") + "\n"
                }
                script += "\\.\n"
            }
        }
        guard try psql(target, script) == 0 else { throw Missing(description: "psql could not load \(sqlitePath) into \(target)") }
        return target
    }

    static func pgType(_ declared: String) -> String {
        let t = declared.uppercased()
        if t.contains("INT") { return "bigint" }
        if t.hasPrefix("NUMERIC") || t.hasPrefix("DECIMAL") { return declared }
        if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") { return "double precision" }
        if t.contains("DATE") || t.contains("TIME") { return "timestamp" }
        if t.contains("BLOB") { return "bytea" }
        return "text"
    }

    static func csv(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return ""
        case .int64(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        case .blob(let b): return "\"\\x" + b.map { String(format: "%02x", $0) }.joined() + "\""
        }
    }
}
