import CZlib
import Foundation

/// The entity model a Core Data (or SwiftData) store keeps in `Z_MODELCACHE`: entity names with
/// their original case, superentities, attributes with their types, and relationships with
/// destinations, inverses and cardinality.
///
/// `Z_CONTENT` is a raw-DEFLATE-compressed binary property list: an `NSKeyedArchiver` archive of
/// the `NSManagedObjectModel`. zlib inflates it; Foundation's `NSKeyedUnarchiver` walks it, with
/// Core Data's classes mapped to the small readers below (only the keys Loupe needs).
struct CoreDataModel {
    /// One entity as the model declares it (properties of its own and inherited ones alike).
    struct Entity {
        var name: String
        var superentity: String?
        var attributes: [String: AttributeType]
        var relationships: [String: Relationship]
    }

    /// What an attribute holds, from `NSAttributeType`.
    enum AttributeType: Equatable {
        case integer, decimal, double, string, bool, date, binary, uuid, uri, transformable, objectID, other

        init(code: Int) {
            switch code {
            case 100, 200, 300: self = .integer
            case 400: self = .decimal
            case 500, 600: self = .double
            case 700: self = .string
            case 800: self = .bool
            case 900: self = .date
            case 1000: self = .binary
            case 1100: self = .uuid
            case 1200: self = .uri
            case 1800: self = .transformable
            case 2000: self = .objectID
            default: self = .other
            }
        }
    }

    /// A relationship: its destination entity, inverse, and whether it is to-many or ordered.
    struct Relationship {
        var name: String
        var destination: String
        var inverse: String?
        var isToMany: Bool
        var isOrdered: Bool
    }

    var entities: [String: Entity]

    /// The model in a `Z_MODELCACHE.Z_CONTENT` blob, or nil when it cannot be read (the caller
    /// then reads names from the store's own structure).
    static func decode(compressed: Data) -> CoreDataModel? {
        guard let plist = inflate(compressed, limit: 64 << 20) else { return nil }
        return decode(archive: plist)
    }

    /// The model in an uncompressed keyed archive (a binary property list).
    ///
    /// ``BinaryPropertyList`` reads the list, checking every offset and count, and the archive is
    /// then walked by hand: nothing in it is instantiated, so a damaged or hostile cache can only
    /// fail to read, never run code or crash.
    static func decode(archive: Data) -> CoreDataModel? {
        guard let top = BinaryPropertyList.parse([UInt8](archive)) as? [String: Any],
              let objects = top["$objects"] as? [Any], let roots = top["$top"] as? [String: Any] else { return nil }
        let archive = KeyedArchive(objects: objects)
        guard let root = archive.object(roots["root"]) as? [String: Any] else { return nil }
        var entities: [String: Entity] = [:]
        for e in archive.collection(root["NSEntities"]) {
            guard let e = archive.object(e) as? [String: Any], let name = archive.string(e["NSEntityName"]), !name.isEmpty else { continue }
            let superentity = (archive.object(e["NSSuperentity"]) as? [String: Any]).flatMap { archive.string($0["NSEntityName"]) }
            var attributes: [String: AttributeType] = [:]
            var relationships: [String: Relationship] = [:]
            for p in archive.collection(e["NSProperties"]) {
                guard let p = archive.object(p) as? [String: Any], let property = archive.string(p["NSPropertyName"]) else { continue }
                // By class, subclasses included (derived and composite attributes are attributes).
                let classes = archive.classNames(p)
                switch classes.contains("NSRelationshipDescription") ? "NSRelationshipDescription"
                    : classes.contains("NSAttributeDescription") ? "NSAttributeDescription" : classes.first {
                case "NSAttributeDescription":
                    attributes[property] = AttributeType(code: (p["NSAttributeType"] as? Int) ?? 0)
                case "NSRelationshipDescription":
                    let destination = archive.string(p["_NSDestinationEntityName"])
                        ?? (archive.object(p["NSDestinationEntity"]) as? [String: Any]).flatMap { archive.string($0["NSEntityName"]) }
                    guard let destination else { continue }
                    let inverse = archive.string(p["_NSInverseRelationshipName"])
                        ?? (archive.object(p["NSInverseRelationship"]) as? [String: Any]).flatMap { archive.string($0["NSPropertyName"]) }
                    relationships[property] = Relationship(name: property, destination: destination, inverse: inverse,
                                                           isToMany: ((p["NSMaxCount"] as? Int) ?? 0) != 1,
                                                           isOrdered: (p["NSIsOrdered"] as? Bool) ?? ((p["NSIsOrdered"] as? Int) ?? 0 != 0))
                default: continue
                }
            }
            entities[name] = Entity(name: name, superentity: superentity, attributes: attributes, relationships: relationships)
        }
        return entities.isEmpty ? nil : CoreDataModel(entities: entities)
    }

    /// Inflates raw DEFLATE data (no zlib header), at most `limit` bytes out; nil when the data is
    /// not DEFLATE or inflates past the limit.
    static func inflate(_ data: Data, limit: Int) -> Data? {
        guard !data.isEmpty else { return nil }
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var out = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let input = [UInt8](data)
        return input.withUnsafeBufferPointer { inputBuffer -> Data? in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = uInt(inputBuffer.count)
            while true {
                let status: Int32 = chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                out.append(contentsOf: chunk[0..<produced])
                if out.count > limit { return nil }
                if status == Z_STREAM_END { return out }
                if status != Z_OK { return nil }
                if produced == 0 && stream.avail_in == 0 { return nil }   // truncated
            }
        }
    }
}

/// An `NSKeyedArchiver` archive's object table, with UIDs as `[uidKey: n]` dictionaries.
private struct KeyedArchive {
    static let uidKey = BinaryPropertyList.uidKey
    let objects: [Any]

    /// The object a UID points at (a non-UID value is itself); nil for `$null` or a bad index.
    func object(_ value: Any?) -> Any? {
        guard let value else { return nil }
        guard let uid = (value as? [String: Any])?[Self.uidKey] as? Int else { return value }
        guard uid > 0, uid < objects.count else { return nil }
        return objects[uid]
    }

    /// A string, plain or archived as an `NSString` object.
    func string(_ value: Any?) -> String? {
        let o = object(value)
        if let s = o as? String { return s }
        return (o as? [String: Any]).flatMap { $0["NS.string"] as? String }
    }

    /// The class of an archived object and its superclasses (`$classes`), the class first.
    func classNames(_ object: [String: Any]) -> [String] {
        guard let description = self.object(object["$class"]) as? [String: Any] else { return [] }
        if let chain = description["$classes"] as? [Any] { return chain.compactMap { $0 as? String } }
        return (description["$classname"] as? String).map { [$0] } ?? []
    }

    /// The members of an archived array, set or dictionary (its values), or of Core Data's
    /// known-keys dictionaries (`values`).
    func collection(_ value: Any?) -> [Any] {
        guard let o = object(value) as? [String: Any] else { return [] }
        if let values = o["NS.objects"] as? [Any] { return values }
        if let values = object(o["values"]) as? [String: Any], let members = values["NS.objects"] as? [Any] { return members }
        if let values = o["values"] as? [Any] { return values }
        return []
    }
}
