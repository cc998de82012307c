import Foundation

/// A type that an app persists through ``ObjectStore``, in Loupe's native (Persist) format.
///
/// Conform a `Codable` struct or class and give it a `storeID`; nothing else is required:
/// ```swift
/// final class Author: Storable { var storeID: Int64?; var name: String; var books: [Book] = [] }
/// struct Book: Storable { var storeID: Int64?; var title: String; var author: Author? }
/// ```
/// A property whose type is itself `Storable` (or `Optional` of one, or an array of them, or a
/// ``Lazy`` of one) becomes a relation: it is saved as the target's own object and a `relations`
/// row, never inside the JSON. Every other property is encoded into the JSON document as Persist
/// does (dates as `yyyy-MM-dd HH:mm:ss ZZZZZ` strings, `nil` omitted). `storeID` itself is never
/// encoded: it is the object's `by_type.id`.
public protocol Storable: Codable {
    /// The object's key in the store: nil until it is first saved.
    var storeID: Int64? { get set }
    /// The `type_name` objects are stored under; by default the type's own name (as Persist).
    static var storedTypeName: String { get }
    /// Names the type was stored under before a rename; objects stored under them still load.
    static var formerTypeNames: [String] { get }
    /// Keys renamed after data was written: former key → current key.
    static var formerKeys: [String: String] { get }
}

extension Storable {
    public static var storedTypeName: String { String(describing: Self.self) }
    public static var formerTypeNames: [String] { [] }
    public static var formerKeys: [String: String] { [:] }

    /// Every type name objects of this type may be stored under.
    static var acceptedTypeNames: [String] { [storedTypeName] + formerTypeNames }
}

/// The name of the key the store manages itself.
let storeIDKey = "storeID"

/// Arrays of stored objects are to-many relations.
protocol StorableCollection {
    static var elementType: any Storable.Type { get }
    var storables: [any Storable] { get }
    static func make(from items: [any Storable]) -> Self
}

extension Array: StorableCollection where Element: Storable {
    static var elementType: any Storable.Type { Element.self }
    var storables: [any Storable] { map { $0 } }
    static func make(from items: [any Storable]) -> Self { items.map { $0 as! Element } }
}

/// A to-one relation followed only when asked (`try book.author.get()`), through the store's
/// identity map. Use it to break cycles when loading (`Author.books` and `Book.author`).
public struct Lazy<Target: Storable>: Codable {
    /// The target's key, nil for a target not saved yet.
    public private(set) var id: Int64?
    private var value: Target?
    private weak var store: ObjectStore?

    /// A reference to a value, to be saved with the object that holds it.
    public init(_ value: Target) {
        self.value = value
        self.id = value.storeID
    }

    init(id: Int64, store: ObjectStore) {
        self.id = id
        self.store = store
    }

    /// The target: the value given at creation, else loaded from the store (one instance per id
    /// for classes).
    public func get() throws -> Target {
        if let value { return value }
        guard let id, let store else {
            throw StoreError(.notFound, typeName: Target.storedTypeName, reason: "this reference was not loaded from a store")
        }
        return try store.load(Target.self, id: id)
    }

    /// Outside a store, a lazy reference encodes as its key.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(id ?? value?.storeID)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        id = try c.decode(Int64?.self)
    }
}

/// What the store's coders see of any `Lazy`.
protocol LazyReference {
    static var targetType: any Storable.Type { get }
    var targetID: Int64? { get }
    var targetValue: (any Storable)? { get }
    static func make(id: Int64, store: ObjectStore) -> Self
}

extension Lazy: LazyReference {
    static var targetType: any Storable.Type { Target.self }
    var targetID: Int64? { id }
    var targetValue: (any Storable)? { value }
    static func make(id: Int64, store: ObjectStore) -> Lazy<Target> { Lazy(id: id, store: store) }
}
