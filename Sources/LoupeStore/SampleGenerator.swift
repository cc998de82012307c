import Foundation
import GRDB
import LoupeModel

/// Generates, through the library API (``ObjectStore``), a deterministic lending-library store of
/// any size in Persist's format: authors,
/// publishers, books, tags, members, loans and reviews, with to-one and to-many relations, dates,
/// optionals, arrays, nested values and Unicode (accents, CJK, emoji). About two relations per
/// object; the same seed and size always give the same file.
public enum SampleGenerator {
    /// Writes a new store of about `objects` objects to `path` (which must not exist).
    public static func generate(path: String, objects: Int, seed: UInt64 = 1) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw StoreError(.readOnly, path: path, reason: "the file exists; Loupe will not overwrite it")
        }
        do {
            let store = try ObjectStore(path: path)
            try store.transaction { tx in try write(tx, objects: max(objects, 10), seed: seed) }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw StoreError.from(error, path: path)
        }
    }

    /// SplitMix64: small, fast, and the same everywhere (the fuzz and walk tests use it too).
    public struct Random: RandomNumberGenerator {
        public var state: UInt64
        public init(state: UInt64) { self.state = state }
        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        public mutating func int(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
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

    private static func write(_ tx: ObjectStore.Transaction, objects n: Int, seed: UInt64) throws {
        typealias L = LendingLibrary
        var rng = Random(state: seed)
        let p = plan(n)
        let pad = DateText.zeroPadded
        func day(_ d: Int) -> Date { epoch.addingTimeInterval(Double(d) * 86400) }
        func name() -> String { rng.pick(firstNames) + " " + rng.pick(lastNames) }
        func title() -> String {
            let k = 1 + rng.int(3)
            return (0..<k).map { _ in rng.pick(words) }.joined(separator: " ")
        }

        var publishers: [L.Publisher] = []
        for i in 0..<p.publishers {
            let suffix = i >= publisherNames.count ? " \(i / publisherNames.count + 1)" : ""
            let publisher = L.Publisher(name: publisherNames[i % publisherNames.count] + suffix, city: rng.pick(cities), founded: 1800 + rng.int(220))
            try tx.save(publisher)
            publishers.append(publisher)
        }
        var tags: [L.Tag] = []
        for i in 0..<p.tags {
            let tag = L.Tag(label: genres[i % genres.count] + (i >= genres.count ? "-\(i / genres.count)" : ""))
            try tx.save(tag)
            tags.append(tag)
        }
        var authors: [L.Author] = []
        for _ in 0..<p.authors {
            let born = 1900 + rng.int(100)
            let author = L.Author(name: name(), born: born, died: rng.chance(30) ? born + 40 + rng.int(50) : nil, country: rng.pick(cities),
                                  bio: rng.chance(50) ? "Writes about \(rng.pick(words).lowercased()) and \(rng.pick(words).lowercased())." : nil)
            try tx.save(author)
            authors.append(author)
        }
        var books: [L.Book] = []
        for i in 0..<p.books {
            let book = L.Book(
                title: title(),
                isbn: "978-\(rng.int(10))-\(pad(i % 100000, 5))-\(pad(rng.int(1000), 3))-\(rng.int(10))",
                published: day(-rng.int(365 * 60)),
                pages: 60 + rng.int(900),
                price: Double(499 + rng.int(5000)) / 100,
                language: rng.pick(languages),
                inPrint: rng.chance(70),
                keywords: (0..<rng.int(4)).map { _ in rng.pick(words).lowercased() },
                edition: rng.chance(40) ? L.Edition(number: 1 + rng.int(5), format: rng.pick(["hardcover", "paperback", "ebook"])) : nil,
                author: authors[rng.int(authors.count)],
                publisher: publishers[rng.int(publishers.count)])
            var chosen = Set<Int>()
            for _ in 0..<rng.int(3) { chosen.insert(rng.int(tags.count)) }
            book.tags = chosen.sorted().map { tags[$0] }
            try tx.save(book)
            books.append(book)
        }
        var members: [L.Member] = []
        for i in 0..<p.members {
            let member = L.Member(
                name: name(), email: "member\(i)@example.org", joined: day(-rng.int(3650)),
                address: L.Address(city: rng.pick(cities), postcode: rng.chance(80) ? pad(rng.int(99999), 5) : nil),
                phone: rng.chance(60) ? "+351 \(pad(rng.int(1000), 3)) \(pad(rng.int(1000), 3)) \(pad(rng.int(1000), 3))" : nil)
            if rng.chance(10) { member.favorites = [books[rng.int(books.count)]] }
            try tx.save(member)
            members.append(member)
        }
        for _ in 0..<p.loans {
            let out = -rng.int(720)
            let returned = rng.chance(80)
            let loan = L.Loan(borrowed: day(out), due: day(out + 21), returned: returned ? day(out + 1 + rng.int(30)) : nil,
                              renewals: rng.int(3), book: books[rng.int(books.count)], member: members[rng.int(members.count)])
            try tx.save(loan)
        }
        for _ in 0..<p.reviews {
            let review = L.Review(
                rating: 1 + rng.int(5),
                text: rng.pick(["Loved it!", "Não gostei.", "Ein Meisterwerk.", "面白かった", "Meh 😐", "Five stars ⭐⭐⭐⭐⭐", "Trop long.", "Could not put it down."]),
                written: day(-rng.int(1000)), book: books[rng.int(books.count)], member: members[rng.int(members.count)])
            try tx.save(review)
        }
    }
}

/// The sample's model, as an app would declare it for ``ObjectStore``: plain `Codable` classes whose
/// stored-type properties become relations.
public enum LendingLibrary {
    public final class Publisher: Storable {
        public var storeID: Int64?
        public var name: String
        public var city: String
        public var founded: Int
        public init(name: String, city: String, founded: Int) { self.name = name; self.city = city; self.founded = founded }
    }

    public final class Tag: Storable {
        public var storeID: Int64?
        public var label: String
        public init(label: String) { self.label = label }
    }

    public final class Author: Storable {
        public var storeID: Int64?
        public var name: String
        public var born: Int
        public var died: Int?
        public var country: String
        public var bio: String?
        public init(name: String, born: Int, died: Int?, country: String, bio: String?) {
            self.name = name; self.born = born; self.died = died; self.country = country; self.bio = bio
        }
    }

    public struct Edition: Codable, Equatable {
        public var number: Int
        public var format: String
    }

    public final class Book: Storable {
        public var storeID: Int64?
        public var title: String
        public var isbn: String
        public var published: Date
        public var pages: Int
        public var price: Double
        public var language: String
        public var inPrint: Bool
        public var keywords: [String]
        public var edition: Edition?
        public var author: Author
        public var publisher: Publisher
        public var tags: [Tag] = []
        public init(title: String, isbn: String, published: Date, pages: Int, price: Double, language: String, inPrint: Bool,
                    keywords: [String], edition: Edition?, author: Author, publisher: Publisher) {
            self.title = title; self.isbn = isbn; self.published = published; self.pages = pages; self.price = price
            self.language = language; self.inPrint = inPrint; self.keywords = keywords; self.edition = edition
            self.author = author; self.publisher = publisher
        }
    }

    public struct Address: Codable, Equatable {
        public var city: String
        public var postcode: String?
    }

    public final class Member: Storable {
        public var storeID: Int64?
        public var name: String
        public var email: String
        public var joined: Date
        public var address: Address
        public var phone: String?
        public var favorites: [Book] = []
        public init(name: String, email: String, joined: Date, address: Address, phone: String?) {
            self.name = name; self.email = email; self.joined = joined; self.address = address; self.phone = phone
        }
    }

    public final class Loan: Storable {
        public var storeID: Int64?
        public var borrowed: Date
        public var due: Date
        public var returned: Date?
        public var renewals: Int
        public var book: Book
        public var member: Member
        public init(borrowed: Date, due: Date, returned: Date?, renewals: Int, book: Book, member: Member) {
            self.borrowed = borrowed; self.due = due; self.returned = returned; self.renewals = renewals; self.book = book; self.member = member
        }
    }

    public final class Review: Storable {
        public var storeID: Int64?
        public var rating: Int
        public var text: String
        public var written: Date
        public var book: Book
        public var member: Member
        public init(rating: Int, text: String, written: Date, book: Book, member: Member) {
            self.rating = rating; self.text = text; self.written = written; self.book = book; self.member = member
        }
    }
}
