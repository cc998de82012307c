import Foundation
import GRDB
import LoupeModel
import Synchronization

/// Persists an app's `Codable` object graphs in Loupe's native format (Persist's tables), so that
/// the browser reads them best.
///
/// - `save` writes a whole graph in one transaction: related objects are saved as their own rows
///   and `relations` rows; a class instance met twice is saved once, cycles included.
/// - `load` reads one object by id, `all` every object of a type in id order, following relations
///   eagerly; ``Lazy`` relations are followed on `get()`. Class instances are kept in a weak
///   identity map, so one id is one instance while anybody holds it.
/// - `delete` removes an object with its relation rows (and, with `cascade`, everything it
///   points to, transitively, that no surviving object still refers to); `count` counts a type.
/// - `transaction` groups several calls; throwing from it rolls all of them back.
/// - It is safe to use one store from several threads: SQLite access is serialised by a GRDB
///   queue and the identity map by a lock.
public final class ObjectStore: Sendable {
    /// The file's path.
    public let path: String
    let queue: DatabaseQueue
    private let identity = Mutex(IdentityMap())

    /// Weak references to the class instances loaded or saved, by id.
    private struct IdentityMap: ~Copyable {
        var entries: [Int64: WeakInstance] = [:]
        var sweepThreshold = 4096
    }

    /// The one unchecked `Sendable` in Loupe: the map holds the app's own class instances, which
    /// the compiler cannot prove safe to share; the map itself is only touched under its lock, and
    /// what an app does with its instances across threads is the app's, as with any ORM.
    private struct WeakInstance: @unchecked Sendable {
        weak var object: AnyObject?
    }

    /// Opens (creating when missing) a store at `path`. A SQLite file in another format is refused.
    public init(path: String) throws {
        self.path = path
        let file = try StoreFile.openForWriting(path)
        queue = file.queue
        fileRetainer = file
        do {
            try queue.write { db in
                let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
                if !tables.isEmpty, !(try PersistFormat.matches(db)) {
                    throw StoreError(.missingTable, path: path, reason: "by_type and relations (this SQLite file is not a Persist store)")
                }
                try PersistWriter(db: db).createSchema()
            }
        } catch { throw StoreError.from(error, path: path) }
    }
    private let fileRetainer: StoreFile

    // MARK: Transactions

    /// Runs `body` in one transaction: every save and delete in it is written together, or, if
    /// `body` throws, none is.
    public func transaction<T>(_ body: (Transaction) throws -> T) throws -> T {
        do {
            // GRDB's `write` runs in a transaction, committed on return and rolled back on throw.
            return try queue.write { db in try body(Transaction(store: self, db: db, saving: SaveContext(store: self, db: db))) }
        } catch let e as StoreError { throw e } catch { throw StoreError.from(error, path: path) }
    }

    /// The calls of a store inside one transaction. A class instance is saved once per
    /// transaction however many saved objects refer to it.
    public struct Transaction {
        let store: ObjectStore
        let db: Database
        let saving: SaveContext

        /// Saves `value` and every object it relates to; sets `storeID` on what is saved.
        public func save<T: Storable>(_ value: inout T) throws {
            let id = try saving.save(value)
            // A class carries its ids already (set while saving); a struct is read back so that
            // every related struct inside it has its id too.
            if !(T.self is AnyClass) { value = try load(T.self, id: id) }
        }

        /// Saves a class instance (and its graph).
        public func save<T: Storable & AnyObject>(_ object: T) throws {
            _ = try saving.save(object)
        }

        /// The object of type `T` with key `id`.
        public func load<T: Storable>(_ type: T.Type, id: Int64) throws -> T {
            try LoadContext(store: store, db: db).load(T.self, id: id)
        }

        /// Every object of type `T` (under its name or a former name), in id order.
        public func all<T: Storable>(_ type: T.Type) throws -> [T] {
            let context = LoadContext(store: store, db: db)
            return try ids(of: T.self).map { try context.load(T.self, id: $0) }
        }

        /// How many objects of type `T` there are.
        public func count<T: Storable>(_ type: T.Type) throws -> Int {
            try ids(of: T.self).count
        }

        /// Deletes an object and its relation rows; with `cascade`, also every object it points
        /// to through its relations, transitively, that nothing else still refers to: a target
        /// shared with an object that stays (and whatever that target reaches) is kept.
        public func delete<T: Storable>(_ type: T.Type, id: Int64, cascade: Bool = false) throws {
            guard try Int64.fetchOne(db, sql: #"SELECT id FROM by_type WHERE id = ? AND type_name IN (\#(placeholders(T.self)))"#,
                                     arguments: StatementArguments([id] + T.acceptedTypeNames.map { $0 as DatabaseValueConvertible })) != nil else {
                throw StoreError(.notFound, typeName: T.storedTypeName, objectID: String(id), reason: "no such object")
            }
            let doomed = cascade ? try cascadeSet(from: id) : [id]
            for d in doomed {
                try db.execute(sql: #"DELETE FROM relations WHERE from_id = ? OR to_id = ?"#, arguments: [d, d])
                try db.execute(sql: #"DELETE FROM by_type WHERE id = ?"#, arguments: [d])
                store.forget(d)
            }
        }

        /// The objects a cascading delete of `root` removes: everything `root` reaches, less what
        /// an object outside that set refers to and what such a survivor reaches in turn.
        func cascadeSet(from root: Int64) throws -> Set<Int64> {
            var reached: Set<Int64> = [root]
            var frontier = [root]
            while let next = frontier.popLast() {
                for target in try Int64.fetchAll(db, sql: #"SELECT to_id FROM relations WHERE from_id = ?"#, arguments: [next])
                where reached.insert(target).inserted { frontier.append(target) }
            }
            // Survivors: referred to from outside the reached set (the root always goes).
            var kept = Set<Int64>()
            for candidate in reached where candidate != root {
                let sources = try Int64.fetchAll(db, sql: #"SELECT from_id FROM relations WHERE to_id = ?"#, arguments: [candidate])
                if sources.contains(where: { !reached.contains($0) }) { kept.insert(candidate) }
            }
            var keptFrontier = Array(kept)
            while let next = keptFrontier.popLast() {
                for target in try Int64.fetchAll(db, sql: #"SELECT to_id FROM relations WHERE from_id = ?"#, arguments: [next])
                where target != root && reached.contains(target) && kept.insert(target).inserted { keptFrontier.append(target) }
            }
            return reached.subtracting(kept)
        }

        private func placeholders<T: Storable>(_ type: T.Type) -> String {
            T.acceptedTypeNames.map { _ in "?" }.joined(separator: ", ")
        }

        private func ids<T: Storable>(of type: T.Type) throws -> [Int64] {
            try Int64.fetchAll(db, sql: #"SELECT id FROM by_type WHERE type_name IN (\#(placeholders(T.self))) ORDER BY id"#,
                               arguments: StatementArguments(T.acceptedTypeNames))
        }
    }

    // MARK: One-call API (each call is its own transaction)

    /// Saves a struct (or class) and its graph in one transaction; sets `storeID` on the value
    /// and, for a struct, on every related struct inside it (the value is read back).
    public func save<T: Storable>(_ value: inout T) throws { try transaction { try $0.save(&value) } }
    /// Saves a class instance and its graph in one transaction.
    public func save<T: Storable & AnyObject>(_ object: T) throws { try transaction { try $0.save(object) } }
    /// The object of type `T` with key `id`.
    public func load<T: Storable>(_ type: T.Type, id: Int64) throws -> T { try transaction { try $0.load(T.self, id: id) } }
    /// Every object of type `T`, in id order.
    public func all<T: Storable>(_ type: T.Type) throws -> [T] { try transaction { try $0.all(T.self) } }
    /// How many objects of type `T` there are.
    public func count<T: Storable>(_ type: T.Type) throws -> Int { try transaction { try $0.count(T.self) } }
    /// Deletes an object (and, with `cascade`, what it points to).
    public func delete<T: Storable>(_ type: T.Type, id: Int64, cascade: Bool = false) throws {
        try transaction { try $0.delete(T.self, id: id, cascade: cascade) }
    }

    // MARK: Identity map

    func cached(_ id: Int64) -> AnyObject? {
        identity.withLock { $0.entries[id]?.object }
    }

    func remember(_ id: Int64, _ object: AnyObject) {
        let entry = WeakInstance(object: object)
        identity.withLock { map in
            map.entries[id] = entry
            // Drop dead entries when the map has doubled since the last sweep (amortised O(1)).
            if map.entries.count > map.sweepThreshold {
                map.entries = map.entries.filter { $0.value.object != nil }
                map.sweepThreshold = max(4096, map.entries.count * 2)
            }
        }
    }

    func forget(_ id: Int64) {
        identity.withLock { _ = $0.entries.removeValue(forKey: id) }
    }
}
