import Foundation
import GRDB
import LoupeModel

/// What the bench compares a load against: the least any reader of the file must do.
public enum LoadFloor {
    /// Reads every row of a Persist file (documents and relations) through SQLite and parses
    /// every document once with Loupe's JSON reader, on one thread, building nothing: the floor
    /// a load (which also builds columns, edges and backlinks, on two threads) is measured against.
    /// Returns the seconds taken and the number of documents that parsed as objects.
    public static func persist(_ file: StoreFile) throws -> (seconds: Double, objects: Int) {
        let start = DispatchTime.now()
        var objects = 0
        try file.read { db in
            guard try db.tableExists("by_type") else { return }
            let documents = try Row.fetchCursor(db, sql: "SELECT id, type_name, json FROM by_type")
            while let row = try documents.next() {
                try row.withUnsafeData(atIndex: 2) { data in
                    guard let data else { return }
                    data.withUnsafeBytes { raw in
                        if (try? JSONReader.forEachMember(bytes: raw.bindMemory(to: UInt8.self), { _, _, _ in })) == true { objects += 1 }
                    }
                }
            }
            let relations = try Row.fetchCursor(db, sql: "SELECT from_id, to_id, relation FROM relations")
            while try relations.next() != nil {}
        }
        return (Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9, objects)
    }
}
