import Foundation
import GRDB
import LoupeStore

/// Graphs whose shape makes a naive evaluation blow up: many objects sharing the same
/// neighbours, so that nested `SUBQUERY`s over them meet the same inputs again and again.
public enum HostileGraphs {
    /// A Persist store of `nodes` `Node` objects (`v` = 1…nodes, ids 1…nodes), each with a
    /// to-many `next` of `fanOut` seeded random nodes, and the adjacency it wrote.
    public static func sharedNeighbours(nodes: Int, fanOut: Int, seed: UInt64 = 1) throws -> (path: String, next: [Int: [Int]]) {
        var random = SampleGenerator.Random(state: seed)
        var next: [Int: [Int]] = [:]
        for n in 1...nodes { next[n] = (0..<fanOut).map { _ in 1 + random.int(nodes) } }
        let path = try HostileFiles.make("shared-neighbours.sqlite") { db in
            try HostileFiles.persistSchema(db)
            try db.execute(sql: "CREATE TABLE loupe_relation_kinds (type_name TEXT NOT NULL, relation TEXT NOT NULL, to_many INTEGER NOT NULL, PRIMARY KEY (type_name, relation))")
            try db.execute(sql: "INSERT INTO loupe_relation_kinds VALUES ('Node', 'next', 1)")
            for n in 1...nodes {
                try db.execute(sql: "INSERT INTO by_type VALUES (?, 'Node', ?)", arguments: [n, #"{"v":\#(n)}"#])
                for m in next[n]! { try db.execute(sql: "INSERT INTO relations VALUES (?, ?, 'next')", arguments: [n, m]) }
            }
        }
        return (path, next)
    }

    /// `Node where SUBQUERY(next, $x1, SUBQUERY($x1.next, $x2, … $xd.v > threshold …).@count > 0).@count > 0`:
    /// the nodes with a path of `depth` hops to a node whose `v` is above `threshold`.
    public static func nestedSubquery(depth: Int, threshold: Int) -> String {
        var inner = "$x\(depth).v > \(threshold)"
        for level in stride(from: depth, through: 1, by: -1) {
            let collection = level == 1 ? "next" : "$x\(level - 1).next"
            inner = "SUBQUERY(\(collection), $x\(level), \(inner)).@count > 0"
        }
        return "Node where \(inner) select v"
    }

    /// The nodes ``nestedSubquery(depth:threshold:)`` finds, worked out from the adjacency.
    public static func reachingAbove(_ next: [Int: [Int]], depth: Int, threshold: Int) -> [Int] {
        var good = Set(next.keys.filter { $0 > threshold })   // v == id
        for _ in 0..<depth { good = Set(next.keys.filter { n in next[n]!.contains { good.contains($0) } }) }
        return good.sorted()
    }

    /// The JSON a member of ``mixedMember(objects:seed:)`` holds, or nil where it is missing.
    public static let mixedValues: [String?] = [nil, "null", "5", "[1, 2]", "[]", "[null]", "{\"x\": 1}", "\"text\"", "2.5", "true", "[5, \"a\"]"]

    /// A Persist store of `objects` `A` objects (`k` = id) whose member `m` holds, object by
    /// object, a seeded pick of ``mixedValues``: null, missing, numbers, arrays, objects and text
    /// in one member. Returns the store and each object's pick.
    public static func mixedMember(objects: Int, seed: UInt64 = 1) throws -> (path: String, picks: [Int: String?]) {
        var random = SampleGenerator.Random(state: seed)
        var picks: [Int: String?] = [:]
        let path = try HostileFiles.make("mixed-member.sqlite") { db in
            try HostileFiles.persistSchema(db)
            for k in 1...objects {
                let pick = mixedValues[random.int(mixedValues.count)]
                picks[k] = pick
                try db.execute(sql: "INSERT INTO by_type VALUES (?, 'A', ?)", arguments: [k, "{" + (pick.map { "\"m\": \($0), " } ?? "") + "\"k\": \(k)}"])
            }
        }
        return (path, picks)
    }
}
