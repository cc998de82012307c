import Foundation
import GRDB
import LoupeModel

/// Generates a deterministic lending-library store of any size in Persist's format: authors,
/// publishers, books, tags, members, loans and reviews, with to-one and to-many relations, dates,
/// optionals, arrays, nested values and Unicode (accents, CJK, emoji). About two relations per
/// object; the same seed and size always give the same file.
public enum SampleGenerator {
    /// Writes a new store of about `objects` objects to `path` (which must not exist).
    public static func generate(path: String, objects: Int, seed: UInt64 = 1) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.readOnly, path: path, reason: "the file exists; Loupe will not overwrite it")
        }
        let file = try StoreFile.openForWriting(path)
        do {
            try file.queue.inDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
                try db.inTransaction {
                    try write(db, objects: max(objects, 10), seed: seed)
                    return .commit
                }
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw StoreError.from(error, path: path)
        }
    }

    /// SplitMix64: small, fast, and the same everywhere.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
        mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }
        mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    }

    static let firstNames = ["Ana", "Björn", "Chloé", "Dmitri", "Émile", "Fatima", "Günther", "Hiroshi", "Inés", "José",
                             "Kwame", "Léa", "Mei", "Nuno", "Olga", "Priya", "Quentin", "Rūta", "Søren", "Tomás",
                             "Ursula", "Vo", "Wiktoria", "Xiu", "Yusuf", "Zoë", "美咲", "健太", "서연", "Ørjan"]
    static let lastNames = ["Almeida", "Brontë", "Castañeda", "Dvořák", "Eriksson", "Fernández", "García", "Hölderlin",
                            "Ishikawa", "Jovanović", "Kowalski", "Lemaître", "Müller", "Nakamura", "O'Brien", "Petrov",
                            "Quiñones", "Rossi", "Schäfer", "Tanaka", "Újvári", "Vasquez", "Wójcik", "Xu", "Yılmaz",
                            "Zielińska", "山田", "李", "김", "Nguyễn"]
    static let words = ["Silent", "River", "Shadow", "Garden", "Winter", "Light", "Empire", "Ocean", "Glass", "Memory",
                        "Night", "Stone", "Fire", "Journey", "Secret", "City", "Dream", "Storm", "Mountain", "Song",
                        "Café", "Señor", "Sakura 桜", "Δέλτα", "Мир", "☕", "🚀", "Library", "Clockwork", "Harbour"]
    static let genres = ["fiction", "mystery", "sci-fi", "fantasy", "history", "poetry", "biography", "science",
                         "travel", "cooking", "children", "romance", "philosophy", "art", "drama", "manga 漫画"]
    static let languages = ["en", "fr", "de", "es", "ja", "zh", "ko", "pt", "it", "ru"]
    static let cities = ["Lisboa", "München", "Zürich", "São Paulo", "Kraków", "Reykjavík", "東京", "서울", "Montréal", "Cape Town"]
    static let publisherNames = ["Penguin", "Gallimard", "Suhrkamp", "Anagrama", "Kodansha", "Faber & Faber", "Éditions du Seuil",
                                 "HarperCollins", "Shinchōsha", "Companhia das Letras"]

    /// 2024-01-01T00:00:00Z, the generator's "now".
    static let epoch = Date(timeIntervalSince1970: 1_704_067_200)

    /// How the objects split between the types, in percent of the total.
    static func plan(_ n: Int) -> (publishers: Int, tags: Int, authors: Int, books: Int, members: Int, loans: Int, reviews: Int) {
        let publishers = max(3, n / 200)
        let tags = max(5, min(genres.count * 4, n / 100))
        let authors = max(2, n * 5 / 100)
        let books = max(2, n * 25 / 100)
        let members = max(2, n * 10 / 100)
        let loans = max(1, n * 40 / 100)
        let reviews = max(1, n - publishers - tags - authors - books - members - loans)
        return (publishers, tags, authors, books, members, loans, reviews)
    }

    private static func write(_ db: Database, objects n: Int, seed: UInt64) throws {
        let writer = PersistWriter(db: db)
        try writer.createSchema()
        var rng = Random(state: seed)
        let p = plan(n)
        for (type, relation, toMany) in [("Book", "author", false), ("Book", "publisher", false), ("Book", "tags", true),
                                         ("Loan", "book", false), ("Loan", "member", false), ("Review", "book", false),
                                         ("Review", "member", false), ("Member", "favorites", true)] {
            try writer.declareRelation(type: type, relation: relation, toMany: toMany)
        }
        let insert = try db.makeStatement(sql: #"INSERT INTO "by_type" ("type_name", "json") VALUES (?, ?)"#)
        let relate = try db.makeStatement(sql: #"INSERT INTO "relations" ("from_id", "to_id", "relation") VALUES (?, ?, ?)"#)
        func add(_ type: String, _ attributes: [(String, Value)]) throws -> Int64 {
            try insert.execute(arguments: [type, PersistWriter.json(attributes)])
            return db.lastInsertedRowID
        }
        func link(_ from: Int64, _ relation: String, _ to: Int64) throws { try relate.execute(arguments: [from, to, relation]) }
        func day(_ d: Int) -> Value { .date(epoch.addingTimeInterval(Double(d) * 86400)) }
        func name() -> String { rng.pick(firstNames) + " " + rng.pick(lastNames) }
        func title() -> String {
            let k = 1 + rng.int(3)
            return (0..<k).map { _ in rng.pick(words) }.joined(separator: " ")
        }

        var publishers: [Int64] = []
        for i in 0..<p.publishers {
            publishers.append(try add("Publisher", [
                ("name", .string(publisherNames[i % publisherNames.count] + (i >= publisherNames.count ? " \(i / publisherNames.count + 1)" : ""))),
                ("city", .string(rng.pick(cities))),
                ("founded", .int(Int64(1800 + rng.int(220)))),
            ]))
        }
        var tags: [Int64] = []
        for i in 0..<p.tags {
            tags.append(try add("Tag", [("label", .string(genres[i % genres.count] + (i >= genres.count ? "-\(i / genres.count)" : "")))]))
        }
        var authors: [Int64] = []
        for _ in 0..<p.authors {
            let born = 1900 + rng.int(100)
            authors.append(try add("Author", [
                ("name", .string(name())),
                ("born", .int(Int64(born))),
                ("died", rng.chance(30) ? .int(Int64(born + 40 + rng.int(50))) : .null),
                ("country", .string(rng.pick(cities))),
                ("bio", rng.chance(50) ? .string("Writes about \(rng.pick(words).lowercased()) and \(rng.pick(words).lowercased()).") : .null),
            ]))
        }
        var books: [Int64] = []
        for i in 0..<p.books {
            let published = -rng.int(365 * 60)
            let id = try add("Book", [
                ("title", .string(title())),
                ("isbn", .string(String(format: "978-%d-%05d-%03d-%d", rng.int(10), i % 100000, rng.int(1000), rng.int(10)))),
                ("published", day(published)),
                ("pages", .int(Int64(60 + rng.int(900)))),
                ("price", .double(Double(499 + rng.int(5000)) / 100)),
                ("language", .string(rng.pick(languages))),
                ("inPrint", .bool(rng.chance(70))),
                ("keywords", .array((0..<rng.int(4)).map { _ in .string(rng.pick(words).lowercased()) })),
                ("edition", rng.chance(40) ? .object(NestedObject([("number", .int(Int64(1 + rng.int(5)))), ("format", .string(rng.pick(["hardcover", "paperback", "ebook"])))])) : .null),
            ])
            books.append(id)
            try link(id, "author", authors[rng.int(authors.count)])
            try link(id, "publisher", publishers[rng.int(publishers.count)])
            for t in Set((0..<rng.int(3)).map { _ in tags[rng.int(tags.count)] }).sorted() { try link(id, "tags", t) }
        }
        var members: [Int64] = []
        for i in 0..<p.members {
            let id = try add("Member", [
                ("name", .string(name())),
                ("email", .string("member\(i)@example.org")),
                ("joined", day(-rng.int(3650))),
                ("address", .object(NestedObject([("city", .string(rng.pick(cities))), ("postcode", rng.chance(80) ? .string(String(format: "%05d", rng.int(99999))) : .null)]))),
                ("phone", rng.chance(60) ? .string(String(format: "+351 %03d %03d %03d", rng.int(1000), rng.int(1000), rng.int(1000))) : .null),
            ])
            members.append(id)
            if rng.chance(10) { try link(id, "favorites", books[rng.int(books.count)]) }
        }
        for _ in 0..<p.loans {
            let out = -rng.int(720)
            let returned = rng.chance(80)
            let id = try add("Loan", [
                ("borrowed", day(out)),
                ("due", day(out + 21)),
                ("returned", returned ? day(out + 1 + rng.int(30)) : .null),
                ("renewals", .int(Int64(rng.int(3)))),
            ])
            try link(id, "book", books[rng.int(books.count)])
            try link(id, "member", members[rng.int(members.count)])
        }
        for _ in 0..<p.reviews {
            let id = try add("Review", [
                ("rating", .int(Int64(1 + rng.int(5)))),
                ("text", .string(rng.pick(["Loved it!", "Não gostei.", "Ein Meisterwerk.", "面白かった", "Meh 😐", "Five stars ⭐⭐⭐⭐⭐", "Trop long.", "Could not put it down."]))),
                ("written", day(-rng.int(1000))),
            ])
            try link(id, "book", books[rng.int(books.count)])
            try link(id, "member", members[rng.int(members.count)])
        }
    }
}
