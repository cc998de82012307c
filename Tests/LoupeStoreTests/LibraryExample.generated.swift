// Made by DocExampleTests from docs/library.md's example: edit the page, not this file.
import Foundation
import LoupeStore

final class DocAuthor: Storable {          // Codable comes with Storable
    var storeID: Int64?                  // set by the store; never encoded
    var name: String
    var books: [DocBook] = []               // an array of a stored type: a to-many relation
    init(name: String) { self.name = name }
}
struct DocBook: Storable {
    var storeID: Int64?
    var title: String
    var published: Date                  // stored as "yyyy-MM-dd HH:mm:ss Z", as Persist does
    var author: Lazy<DocAuthor>?            // a to-one relation, followed on get()
    static var formerKeys: [String: String] { ["name": "title"] }   // read data written before a rename
}

/// The example's statements, over the store at `path`; returns the store.
func docLibraryExample(path: String) throws -> ObjectStore {
    let store = try ObjectStore(path: path)
    let ursula = DocAuthor(name: "Ursula")
    ursula.books = [DocBook(title: "The Dispossessed", published: .now, author: Lazy(ursula))]
    try store.save(ursula)                  // the whole graph, one transaction; cycles and shared objects once
    let again = try store.load(DocAuthor.self, id: ursula.storeID!)   // one id, one instance (weak identity map)
    try store.transaction { tx in try tx.delete(DocAuthor.self, id: again.storeID!, cascade: true) }
    return store
}
