import Foundation
import GRDB
import LoupeModel

// MARK: Saving

/// One `save`: encodes objects into attributes and relations, saving related objects first.
final class SaveContext {
    let store: ObjectStore
    let writer: PersistWriter
    /// Class instances already saved (or being saved) in this transaction: shared objects and cycles.
    /// The instances are retained so that their identifiers stay unique while the context lives.
    private var savedInstances: [ObjectIdentifier: (object: AnyObject, id: Int64)] = [:]
    /// Relation kinds already recorded in this transaction.
    private var declared: Set<String> = []

    /// The next id to hand out; ids are reserved before an object is encoded.
    private var nextID: Int64?

    init(store: ObjectStore, db: Database) {
        self.store = store
        self.writer = PersistWriter(db: db)
    }

    private func reserveID() throws -> Int64 {
        let id = try nextID ?? ((Int64.fetchOne(writer.db, sql: #"SELECT max("id") FROM "by_type""#) ?? 0) + 1)
        nextID = id + 1
        return id
    }

    /// Saves one object and what it relates to; returns its id.
    func save(_ value: any Storable) throws -> Int64 {
        let typeName = type(of: value).storedTypeName
        let object = value as AnyObject
        let isClass = type(of: value) is AnyClass
        if isClass, let saved = savedInstances[ObjectIdentifier(object)] { return saved.id }
        // Reserve the id before encoding, so that a cycle back to this object finds it; a new
        // object is then written with one INSERT, an existing one with one UPDATE.
        let isNew: Bool
        let id: Int64
        if let existing = value.storeID, try writer.exists(existing) {
            isNew = false
            id = existing
        } else {
            isNew = true
            id = try value.storeID ?? reserveID()
        }
        if isClass {
            savedInstances[ObjectIdentifier(object)] = (object, id)
            var copy = value
            copy.storeID = id   // a class: this sets the instance's id
            store.remember(id, object)
        }
        let encoder = ObjectEncoder(context: self, codingPath: [])
        do { try value.encode(to: encoder) } catch let e as StoreError { throw e } catch {
            throw StoreError(.unencodable, typeName: typeName, objectID: String(id), reason: "\(error)")
        }
        let top = encoder.root
        let attributes = top.attributes.map { ($0.key, $0.node.value) }
        if isNew {
            try writer.insert(id: id, type: typeName, attributes: attributes)
        } else {
            try writer.update(id: id, type: typeName, attributes: attributes)
            try writer.deleteRelations(from: id)
        }
        for relation in top.relations {
            try writer.addRelation(from: id, relation: relation.name, to: relation.targets)
            if declared.insert(typeName + "\u{0}" + relation.name).inserted {
                try writer.declareRelation(type: typeName, relation: relation.name, toMany: relation.toMany)
            }
        }
        return id
    }
}

/// A value under construction by the encoder.
final class EncodedNode {
    enum Kind { case empty, value(Value), keyed, unkeyed }
    var kind: Kind = .empty
    var members: [(key: String, node: EncodedNode)] = []
    var items: [EncodedNode] = []

    var value: Value {
        switch kind {
        case .empty: return .null
        case .value(let v): return v
        case .keyed: return .object(NestedObject(members.map { ($0.key, $0.node.value) }))
        case .unkeyed: return .array(items.map(\.value))
        }
    }
}

/// The top level of one object: attributes and relations.
final class EncodedObject {
    var attributes: [(key: String, node: EncodedNode)] = []
    var relations: [(name: String, targets: [Int64], toMany: Bool)] = []
}

/// Encodes one stored object. Only its top-level keyed container can hold relations; values
/// nested deeper are plain values (a `Storable` inside a plain struct is embedded as JSON).
final class ObjectEncoder: Encoder {
    let context: SaveContext?
    var codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let root = EncodedObject()
    /// For nested encoders: the node they fill.
    let node: EncodedNode?

    init(context: SaveContext?, codingPath: [CodingKey], node: EncodedNode? = nil) {
        self.context = context
        self.codingPath = codingPath
        self.node = node
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if let node {
            node.kind = .keyed
            return KeyedEncodingContainer(NestedKeyedEncoder<Key>(node: node, codingPath: codingPath))
        }
        return KeyedEncodingContainer(ObjectKeyedEncoder<Key>(encoder: self))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        let n = node ?? EncodedNode()
        n.kind = .unkeyed
        return NestedUnkeyedEncoder(node: n, codingPath: codingPath)
    }

    func singleValueContainer() -> SingleValueEncodingContainer {
        NestedSingleEncoder(node: node ?? EncodedNode(), codingPath: codingPath)
    }

    /// The common scalar types, recognised by their metatype before any dynamic cast.
    @inline(__always)
    static func primitive<T: Encodable>(_ value: T) -> Value? {
        if T.self == String.self { return .string(value as! String) }
        if T.self == Int.self { return .int(Int64(value as! Int)) }
        if T.self == Int64.self { return .int(value as! Int64) }
        if T.self == Double.self { return .double(value as! Double) }
        if T.self == Bool.self { return .bool(value as! Bool) }
        if T.self == Date.self { return .date(value as! Date) }
        return nil
    }

    /// A plain (non-relation) value as a model value.
    static func plainValue<T: Encodable>(_ value: T, codingPath: [CodingKey]) throws -> Value {
        if let v = primitive(value) { return v }
        switch value {
        case let d as Date: return .date(d)
        case let d as Data: return .string(d.base64EncodedString())
        case let u as URL: return .string(u.absoluteString)
        case let d as Decimal: return .double(NSDecimalNumber(decimal: d).doubleValue)
        default:
            let node = EncodedNode()
            try value.encode(to: ObjectEncoder(context: nil, codingPath: codingPath, node: node))
            return node.value
        }
    }
}

/// The top-level container of a stored object: relations are recognised here by type.
struct ObjectKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ObjectEncoder
    var codingPath: [CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws {}

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let name = key.stringValue
        if name == storeIDKey { return }
        if let plain = ObjectEncoder.primitive(value) {
            let node = EncodedNode()
            node.kind = .value(plain)
            encoder.root.attributes.append((name, node))
            return
        }
        if let context = encoder.context {
            if let target = value as? any Storable {
                encoder.root.relations.append((name, [try context.save(target)], false))
                return
            }
            if let many = value as? any StorableCollection {
                encoder.root.relations.append((name, try many.storables.map { try context.save($0) }, true))
                return
            }
            if let lazy = value as? any LazyReference {
                if let target = lazy.targetValue { encoder.root.relations.append((name, [try context.save(target)], false)) }
                else if let id = lazy.targetID { encoder.root.relations.append((name, [id], false)) }
                return
            }
        }
        let node = EncodedNode()
        node.kind = .value(try ObjectEncoder.plainValue(value, codingPath: codingPath + [key]))
        encoder.root.attributes.append((name, node))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let node = EncodedNode()
        node.kind = .keyed
        encoder.root.attributes.append((key.stringValue, node))
        return KeyedEncodingContainer(NestedKeyedEncoder<NestedKey>(node: node, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        let node = EncodedNode()
        node.kind = .unkeyed
        encoder.root.attributes.append((key.stringValue, node))
        return NestedUnkeyedEncoder(node: node, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> Encoder { encoder }
}

struct NestedKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    var codingPath: [CodingKey]

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let child = EncodedNode()
        child.kind = .value(try ObjectEncoder.plainValue(value, codingPath: codingPath + [key]))
        node.members.append((key.stringValue, child))
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodedNode()
        child.kind = .keyed
        node.members.append((key.stringValue, child))
        return KeyedEncodingContainer(NestedKeyedEncoder<NestedKey>(node: child, codingPath: codingPath + [key]))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        let child = EncodedNode()
        child.kind = .unkeyed
        node.members.append((key.stringValue, child))
        return NestedUnkeyedEncoder(node: child, codingPath: codingPath + [key])
    }
    mutating func superEncoder() -> Encoder { ObjectEncoder(context: nil, codingPath: codingPath, node: node) }
    mutating func superEncoder(forKey key: Key) -> Encoder { ObjectEncoder(context: nil, codingPath: codingPath, node: node) }
}

struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ i: Int) { stringValue = String(i); intValue = i }
    init?(stringValue: String) { self.stringValue = stringValue; intValue = Int(stringValue) }
    init?(intValue: Int) { self.init(intValue) }
}

struct NestedUnkeyedEncoder: UnkeyedEncodingContainer {
    let node: EncodedNode
    var codingPath: [CodingKey]
    var count: Int { node.items.count }

    mutating func encodeNil() throws { let c = EncodedNode(); c.kind = .value(.null); node.items.append(c) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let c = EncodedNode()
        c.kind = .value(try ObjectEncoder.plainValue(value, codingPath: codingPath + [IndexKey(count)]))
        node.items.append(c)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let c = EncodedNode(); c.kind = .keyed; node.items.append(c)
        return KeyedEncodingContainer(NestedKeyedEncoder<NestedKey>(node: c, codingPath: codingPath + [IndexKey(count)]))
    }
    mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer {
        let c = EncodedNode(); c.kind = .unkeyed; node.items.append(c)
        return NestedUnkeyedEncoder(node: c, codingPath: codingPath + [IndexKey(count)])
    }
    mutating func superEncoder() -> Encoder { ObjectEncoder(context: nil, codingPath: codingPath, node: node) }
}

struct NestedSingleEncoder: SingleValueEncodingContainer {
    let node: EncodedNode
    var codingPath: [CodingKey]
    mutating func encodeNil() throws { node.kind = .value(.null) }
    mutating func encode(_ value: Bool) throws { node.kind = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { node.kind = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { node.kind = .value(.double(value)) }
    mutating func encode(_ value: Float) throws { node.kind = .value(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { node.kind = .value(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { node.kind = .value(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { node.kind = .value(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { node.kind = .value(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.kind = .value(.int(value)) }
    mutating func encode(_ value: UInt) throws { node.kind = .value(.int(Int64(clamping: value))) }
    mutating func encode(_ value: UInt8) throws { node.kind = .value(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { node.kind = .value(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { node.kind = .value(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { node.kind = .value(.int(Int64(clamping: value))) }
    mutating func encode<T: Encodable>(_ value: T) throws { node.kind = .value(try ObjectEncoder.plainValue(value, codingPath: codingPath)) }
}

// MARK: Loading

/// One `load`: reads rows and decodes them, following relations (eagerly, or lazily for `Lazy`).
final class LoadContext {
    let store: ObjectStore
    let db: Database
    /// Objects being decoded in this call, to report cycles instead of recursing forever.
    private var inProgress: Set<Int64> = []
    /// Struct values decoded in this call, so a shared object decodes once.
    private var decoded: [Int64: any Storable] = [:]

    init(store: ObjectStore, db: Database) {
        self.store = store
        self.db = db
    }

    func load<T: Storable>(_ type: T.Type, id: Int64) throws -> T {
        let value = try loadAny(T.self, id: id)
        guard let typed = value as? T else {
            throw StoreError(.undecodableRow, typeName: T.storedTypeName, objectID: String(id), reason: "the object is not a \(T.storedTypeName)")
        }
        return typed
    }

    func loadAny(_ type: any Storable.Type, id: Int64) throws -> any Storable {
        if let object = store.cached(id), let typed = object as? any Storable, Swift.type(of: typed) == type { return typed }
        if let done = decoded[id] { return done }
        guard let row = try Row.fetchOne(db, sql: #"SELECT type_name, json FROM by_type WHERE id = ?"#, arguments: [id]) else {
            throw StoreError(.notFound, typeName: type.storedTypeName, objectID: String(id), reason: "no such object")
        }
        let typeName: String = row[0]
        guard type.acceptedTypeNames.contains(typeName) else {
            throw StoreError(.undecodableRow, typeName: type.storedTypeName, objectID: String(id),
                             reason: "the object is stored as \(typeName), not \(type.storedTypeName)")
        }
        guard inProgress.insert(id).inserted else {
            throw StoreError(.undecodableRow, typeName: type.storedTypeName, objectID: String(id),
                             reason: "the relations form a cycle; make one side of it Lazy<\(type.storedTypeName)>")
        }
        defer { inProgress.remove(id) }
        let json: String = row[1]
        let attributes: Value
        do {
            let any = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
            attributes = JSONValue.from(any)
        } catch {
            throw StoreError(.undecodableRow, typeName: typeName, objectID: String(id), reason: "its JSON does not parse")
        }
        var relations: [String: [Int64]] = [:]
        for r in try Row.fetchAll(db, sql: #"SELECT relation, to_id FROM relations WHERE from_id = ? ORDER BY rowid"#, arguments: [id]) {
            relations[r[0], default: []].append(r[1])
        }
        let decoder = ObjectDecoder(context: self, id: id, value: attributes, relations: relations,
                                    formerKeys: type.formerKeys, codingPath: [])
        let value: any Storable
        do { value = try type.init(from: decoder) } catch let e as StoreError { throw e } catch {
            throw StoreError(.undecodableRow, typeName: typeName, objectID: String(id), reason: ObjectDecoder.describe(error))
        }
        if type is AnyClass { store.remember(id, value as AnyObject) } else { decoded[id] = value }
        return value
    }
}

/// JSON from Foundation as model values.
enum JSONValue {
    /// `dates`: strings in Persist's date form become dates (the browser's view of a document);
    /// the library API keeps them strings and lets `Date`'s decoding read them.
    static func from(_ any: Any, dates: Bool = false) -> Value {
        switch any {
        case is NSNull: return .null
        case let s as String:
            if dates, PersistDates.isPersistDate(s), let d = DateText.parse(s) { return .date(d) }
            return .string(s)
        case let n as NSNumber:
            let kind = String(cString: n.objCType)
            if kind == "c" || kind == "B" { return .bool(n.boolValue) }
            if kind == "d" || kind == "f" {
                let d = n.doubleValue
                return d == d.rounded() && abs(d) < 9e15 && !n.stringValue.contains(".") ? .int(Int64(d)) : .double(d)
            }
            return .int(n.int64Value)
        case let a as [Any]: return .array(a.map { from($0, dates: dates) })
        case let d as [String: Any]: return .object(NestedObject(d.sorted { $0.key < $1.key }.map { ($0.key, from($0.value, dates: dates)) }))
        default: return .null
        }
    }
}

/// Decodes one stored object: attributes from its JSON, relations from its `relations` rows.
final class ObjectDecoder: Decoder {
    let context: LoadContext?
    let id: Int64?
    let value: Value
    let relations: [String: [Int64]]
    let formerKeys: [String: String]
    var codingPath: [CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(context: LoadContext?, id: Int64?, value: Value, relations: [String: [Int64]], formerKeys: [String: String], codingPath: [CodingKey]) {
        self.context = context
        self.id = id
        self.value = value
        self.relations = relations
        self.formerKeys = formerKeys
        self.codingPath = codingPath
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let c): return "missing key '\((c.codingPath + [key]).map(\.stringValue).joined(separator: "."))'"
        case DecodingError.typeMismatch(let t, let c): return "expected \(t) at '\(c.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.valueNotFound(let t, let c): return "missing \(t) at '\(c.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.dataCorrupted(let c): return c.debugDescription
        default: return "\(error)"
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let o) = value else {
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath, debugDescription: "not an object"))
        }
        return KeyedDecodingContainer(ObjectKeyedDecoder<Key>(decoder: self, object: o))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        guard case .array(let items) = value else {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "not an array"))
        }
        return ValueUnkeyedDecoder(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer { ValueSingleDecoder(value: value, codingPath: codingPath) }

    /// A plain value decoded as `T`.
    static func decodePlain<T: Decodable>(_ type: T.Type, from value: Value, codingPath: [CodingKey]) throws -> T {
        if T.self == Date.self {
            switch value {
            case .string(let s): if let d = DateText.parse(s) { return d as! T }
            case .int(let i): return Date(timeIntervalSinceReferenceDate: Double(i)) as! T
            case .double(let d): return Date(timeIntervalSinceReferenceDate: d) as! T
            case .date(let d): return d as! T
            default: break
            }
            throw DecodingError.typeMismatch(Date.self, .init(codingPath: codingPath, debugDescription: "not a date"))
        }
        if T.self == Data.self, case .string(let s) = value, let d = Data(base64Encoded: s) { return d as! T }
        if T.self == URL.self, case .string(let s) = value, let u = URL(string: s) { return u as! T }
        return try T(from: ObjectDecoder(context: nil, id: nil, value: value, relations: [:], formerKeys: [:], codingPath: codingPath))
    }
}

struct ObjectKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ObjectDecoder
    let object: NestedObject
    var codingPath: [CodingKey] { decoder.codingPath }

    var allKeys: [Key] { object.members.compactMap { Key(stringValue: $0.key) } + decoder.relations.keys.compactMap { Key(stringValue: $0) } }

    /// The stored value of a key, under its current name or a former one.
    private func stored(_ key: Key) -> Value? {
        if let v = object[key.stringValue] { return v }
        for (old, new) in decoder.formerKeys where new == key.stringValue { if let v = object[old] { return v } }
        return nil
    }

    private func targets(_ key: Key) -> [Int64]? {
        if let t = decoder.relations[key.stringValue] { return t }
        for (old, new) in decoder.formerKeys where new == key.stringValue { if let t = decoder.relations[old] { return t } }
        return nil
    }

    func contains(_ key: Key) -> Bool {
        (key.stringValue == storeIDKey && decoder.id != nil) || stored(key) != nil || targets(key) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if key.stringValue == storeIDKey { return decoder.id == nil }
        if targets(key) != nil { return false }
        return stored(key).map(\.isNull) ?? true
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let path = codingPath + [key]
        if key.stringValue == storeIDKey, let id = decoder.id {
            if let v = id as? T { return v }
            if let v = Optional(id) as? T { return v }
        }
        if let context = decoder.context {
            if let storable = T.self as? any Storable.Type {
                guard let id = targets(key)?.first else {
                    throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no \(key.stringValue) relation"))
                }
                return try context.loadAny(storable, id: id) as! T
            }
            if let many = T.self as? any StorableCollection.Type {
                let items = try (targets(key) ?? []).map { try context.loadAny(many.elementType, id: $0) }
                return many.make(from: items) as! T
            }
            if let lazy = T.self as? any LazyReference.Type {
                guard let id = targets(key)?.first else {
                    throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no \(key.stringValue) relation"))
                }
                return lazy.make(id: id, store: context.store) as! T
            }
        }
        guard let v = stored(key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for '\(key.stringValue)'"))
        }
        return try ObjectDecoder.decodePlain(T.self, from: v, codingPath: path)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ObjectDecoder(context: nil, id: nil, value: stored(key) ?? .null, relations: [:], formerKeys: [:], codingPath: codingPath + [key])
            .container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        try ObjectDecoder(context: nil, id: nil, value: stored(key) ?? .null, relations: [:], formerKeys: [:], codingPath: codingPath + [key])
            .unkeyedContainer()
    }

    func superDecoder() throws -> Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> Decoder { decoder }
}

struct ValueUnkeyedDecoder: UnkeyedDecodingContainer {
    let items: [Value]
    var codingPath: [CodingKey]
    var currentIndex = 0
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(items: [Value], codingPath: [CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    private mutating func next() throws -> Value {
        guard !isAtEnd else { throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "end of array")) }
        defer { currentIndex += 1 }
        return items[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        if !isAtEnd, items[currentIndex].isNull { currentIndex += 1; return true }
        return false
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let path = codingPath + [IndexKey(currentIndex)]
        return try ObjectDecoder.decodePlain(T.self, from: try next(), codingPath: path)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try ObjectDecoder(context: nil, id: nil, value: try next(), relations: [:], formerKeys: [:], codingPath: codingPath).container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer {
        try ObjectDecoder(context: nil, id: nil, value: try next(), relations: [:], formerKeys: [:], codingPath: codingPath).unkeyedContainer()
    }
    mutating func superDecoder() throws -> Decoder {
        ObjectDecoder(context: nil, id: nil, value: try next(), relations: [:], formerKeys: [:], codingPath: codingPath)
    }
}

struct ValueSingleDecoder: SingleValueDecodingContainer {
    let value: Value
    var codingPath: [CodingKey]

    func decodeNil() -> Bool { value.isNull }

    private func mismatch<T>(_ t: T.Type) -> DecodingError {
        DecodingError.typeMismatch(t, .init(codingPath: codingPath, debugDescription: "found \(value.kind)"))
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        switch value { case .bool(let b): return b; case .int(let i): return i != 0; default: throw mismatch(type) }
    }
    func decode(_ type: String.Type) throws -> String {
        switch value { case .string(let s): return s; case .date(let d): return DateText.persist(d); default: throw mismatch(type) }
    }
    func decode(_ type: Double.Type) throws -> Double { guard let d = value.numeric else { throw mismatch(type) }; return d }
    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        switch value {
        case .int(let i): if let v = I(exactly: i) { return v }
        case .double(let d): if let v = I(exactly: d) { return v }
        case .bool(let b): return b ? 1 : 0
        default: break
        }
        throw mismatch(type)
    }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try ObjectDecoder.decodePlain(T.self, from: value, codingPath: codingPath) }
}
