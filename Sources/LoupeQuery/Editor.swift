import DisplayText
import Foundation
import LoupeModel

/// Turns the language's mutations (`update`, `insert`, `delete`) and the browser's edit actions
/// into ``EditStep``s over a (staged) graph, refusing what the store would not take:
///
/// - values are checked against what the store declares (a relational column's type affinity,
///   `NOT NULL`, generated and key columns) or, in a schemaless document, against the kinds the
///   attribute holds in the file (Persist's app decodes them into fixed Swift types);
/// - relation targets are found in the relation's target types, by key or by reference;
/// - new objects get their key as the store assigns it (Persist's global max + 1, a rowid's or an
///   `INTEGER PRIMARY KEY`'s max + 1), or must be given one;
/// - deleting an object follows each declared foreign key's `ON DELETE` (cascade, set null, set
///   default), or is refused with the objects that still refer to it.
///
/// Nothing here writes: the steps are staged by ``PendingChanges`` and written by the host.
public struct Editor {
    public let graph: ObjectGraph
    private let engine: QueryEngine
    /// The largest key the store holds beyond `graph` (paged mode's graph holds some objects of
    /// it): a key shared by every type is assigned above both.
    private let storedKeyMaximum: Int64
    /// The largest key the store holds of each type (by index) beyond `graph`, where a type's
    /// keys are assigned as its max + 1 (a rowid): a new object's key is above both.
    private let storedTypeKeyMaxima: [Int: Int64]

    public init(graph: ObjectGraph, storedKeyMaximum: Int64 = 0, storedTypeKeyMaxima: [Int: Int64] = [:]) {
        self.graph = graph
        self.storedKeyMaximum = storedKeyMaximum
        self.storedTypeKeyMaxima = storedTypeKeyMaxima
        engine = QueryEngine(graph: graph)
    }

    // MARK: Statements

    /// The step a mutation statement stages; `source` is the statement as typed (its label).
    /// `objects`, when given, are the objects its `where` selects, found by the caller (paged
    /// mode asks the store); the predicate is then not evaluated here.
    public func step(for mutation: Mutation, source: String, cancellation: Cancellation? = nil, objects: [ObjectRef]? = nil) throws -> EditStep {
        switch mutation {
        case .update(let typeName, let predicate, let assignments):
            return try update(typeName, predicate, assignments, source: source, cancellation: cancellation, objects: objects)
        case .insert(let typeName, let fields):
            return try insert(typeName, fields, source: source)
        case .delete(let typeName, let predicate):
            let type = try writable(typeName)
            let compiler = Compiler(graph: graph)
            let refs = try objects ?? engine.filter(type, predicate, QueryEngine.Run(compiler: compiler, cancellation: cancellation))
            return try deletionStep(refs, label: source, at: typeName.range)
        }
    }

    /// The type a mutation names, unless it is read-only.
    private func writable(_ name: Name) throws -> TypeTable {
        let type = try Compiler(graph: graph).resolveType(name)
        if let reason = type.readOnlyReason { throw QueryError("\(type.name) is read-only", at: name.range, hint: reason) }
        return type
    }

    /// What an assignment's name means on a type.
    private enum Target {
        case attribute(name: String, index: Int?)
        case relation(RelationColumn)
    }

    /// The relation of a declared foreign key whose column is `column` and whose values are its
    /// targets' keys (an inferred key, or one to another column, is written as a plain value).
    private func declaredForeignKey(on type: TypeTable, column: String) -> RelationColumn? {
        type.relations.first { relation in
            guard let fk = relation.foreignKey, fk.attribute == column, !fk.isInferred else { return false }
            guard let referenced = fk.targetAttribute else { return true }
            if case .column(let key, _) = graph.types[fk.targetType].keyPolicy { return key == referenced }
            return false
        }
    }

    private func target(_ name: Name, on type: TypeTable, allowNew: Bool) throws -> Target {
        // A declared foreign key's column is set through its relation, whichever name is used:
        // the value names the target by its key, and a key no target has is refused.
        if let a = type.attributeIndex[name.text] {
            if let relation = declaredForeignKey(on: type, column: type.attributes[a].name) { return .relation(relation) }
            return .attribute(name: type.attributes[a].name, index: a)
        }
        if let r = type.relationIndex[name.text], type.relations[r].foreignKey == nil || type.relations[r].name == name.text {
            return .relation(type.relations[r])
        }
        if let a = type.attribute(named: name.text) { return .attribute(name: type.attributes[a].name, index: a) }
        if let r = type.relation(named: name.text) { return .relation(type.relations[r]) }
        if allowNew, type.attributes.allSatisfy({ $0.storage == nil }), !type.attributes.isEmpty || type.relations.allSatisfy({ $0.foreignKey == nil }) {
            return .attribute(name: name.text, index: nil)   // a schemaless document takes a new key
        }
        let names = type.attributes.map(\.name) + type.relations.map(\.name)
        throw QueryError("unknown attribute '\(name.text)' on \(type.name)", at: name.range,
                         hint: NameSuggestion.closest(to: name.text, in: names).map { "did you mean '\($0)'?" })
    }

    private func update(_ typeName: Name, _ predicate: Predicate?, _ assignments: [Assignment], source: String,
                        cancellation: Cancellation?, objects: [ObjectRef]?) throws -> EditStep {
        let type = try writable(typeName)
        let compiler = Compiler(graph: graph)
        let run = QueryEngine.Run(compiler: compiler, cancellation: cancellation)
        let refs = try objects ?? engine.filter(type, predicate, run)
        let targets = try assignments.map { try target($0.target, on: type, allowNew: $0.kind == .set) }
        let values = try assignments.map { try compiler.expression($0.value, on: [type.index]) }
        let env = run.environment()
        var edits: [Edit] = []
        edits.reserveCapacity(refs.count * assignments.count)
        for (i, ref) in refs.enumerated() {
            if i & 1023 == 0 { try env.check() }
            let identity = graph.identity(of: ref)
            for (k, assignment) in assignments.enumerated() {
                let operand = values[k].evaluate(.reference(ref), env)
                let range = assignment.value.range
                switch targets[k] {
                case .attribute(let name, let index):
                    guard assignment.kind == .set else {
                        throw QueryError("'\(name)' is an attribute; += and -= change to-many relations", at: assignment.target.range, hint: "write \(name) = …")
                    }
                    guard case .one(let value) = operand else {
                        throw QueryError("'\(name)' takes one value", at: range, hint: "this expression yields a collection")
                    }
                    let checked = try check(value, for: name, index: index, in: type, at: range, isInsert: false)
                    // A value the object holds already is no change.
                    if let index, type.value(row: Int(ref.row), attribute: index) == checked { continue }
                    edits.append(.set(identity, attribute: name, value: checked))
                case .relation(let relation):
                    edits.append(contentsOf: try relationEdits(identity, ref: ref, relation, kind: assignment.kind, operand, in: type, at: range))
                }
            }
        }
        try env.check()
        return EditStep(label: source, edits: edits)
    }

    private func insert(_ typeName: Name, _ fields: [(Name, Expression)], source: String) throws -> EditStep {
        let type = try writable(typeName)
        let compiler = Compiler(graph: graph)
        let env = Environment(slots: 0)
        var values: [String: Value] = [:]
        var relations: [(RelationColumn, Operand, SourceRange)] = []
        for (name, expression) in fields {
            let compiled = try compiler.expression(expression, on: [type.index])
            let operand = compiled.evaluate(.null, env)
            switch try target(name, on: type, allowNew: true) {
            case .attribute(let attribute, let index):
                guard case .one(let value) = operand else { throw QueryError("'\(attribute)' takes one value", at: expression.range) }
                values[attribute] = try check(value, for: attribute, index: index, in: type, at: expression.range, isInsert: true)
            case .relation(let relation):
                relations.append((relation, operand, expression.range))
            }
        }
        // Relations held by foreign-key columns are values of those columns.
        var links: [(RelationColumn, [ObjectIdentity])] = []
        for (relation, operand, range) in relations {
            try refuseComposite(relation, at: range)
            let targets = try targetRefs(operand, relation, at: range)
            if let fk = relation.foreignKey {
                guard targets.count <= 1 else { throw QueryError("'\(relation.name)' is to-one", at: range, hint: "give one object") }
                values[fk.attribute] = try targets.first.map { try keyValue(of: $0, for: fk, at: range) } ?? .null
            } else {
                links.append((relation, targets.map(graph.identity(of:))))
            }
        }
        let id = try newKey(for: type, values: &values, at: typeName.range)
        try checkRequiredColumns(type, given: values, at: typeName.range)
        let identity = ObjectIdentity(type: type.name, id: id)
        var edits: [Edit] = [.insert(identity, values: values)]
        for (relation, targets) in links { edits.append(.link(identity, relation: relation.name, targets: targets)) }
        return EditStep(label: source, edits: edits)
    }

    // MARK: Relations

    /// A relation over a composite foreign key is edited through its columns, which say which
    /// target each part names.
    private func refuseComposite(_ relation: RelationColumn, at range: SourceRange) throws {
        guard let key = relation.compositeKey else { return }
        let columns = key.columns.joined(separator: ", ")
        throw QueryError("'\(relation.name)' follows a foreign key of several columns (\(columns))", at: range,
                         hint: "set the columns themselves: " + key.columns.map { "\($0) = …" }.joined(separator: ", "))
    }

    /// The edits that change one object's relation: `=` sets (a to-one's target, a to-many's
    /// list), `+=` adds one target, `-=` removes one.
    private func relationEdits(_ identity: ObjectIdentity, ref: ObjectRef, _ relation: RelationColumn, kind: Assignment.Kind,
                               _ operand: Operand, in type: TypeTable, at range: SourceRange) throws -> [Edit] {
        try refuseComposite(relation, at: range)
        let targets = try targetRefs(operand, relation, at: range)
        if let fk = relation.foreignKey {
            guard kind == .set else { throw QueryError("'\(relation.name)' is to-one", at: range, hint: "write \(relation.name) = #key (or nil)") }
            guard targets.count <= 1 else { throw QueryError("'\(relation.name)' is to-one", at: range, hint: "give one object") }
            let value = try targets.first.map { try keyValue(of: $0, for: fk, at: range) } ?? .null
            let index = type.attributeIndex[fk.attribute]
            return [.set(identity, attribute: fk.attribute, value: try check(value, for: fk.attribute, index: index, in: type, at: range, isInsert: false))]
        }
        let current = Array(relation.targets(of: Int(ref.row)))
        var next: [ObjectRef]
        switch kind {
        case .set:
            if !relation.isToMany && targets.count > 1 { throw QueryError("'\(relation.name)' is to-one", at: range, hint: "give one object") }
            next = targets
        case .add:
            guard relation.isToMany else { throw QueryError("'\(relation.name)' is to-one", at: range, hint: "write \(relation.name) = #key") }
            next = current + targets.filter { !current.contains($0) }
        case .remove:
            guard relation.isToMany else { throw QueryError("'\(relation.name)' is to-one", at: range, hint: "write \(relation.name) = nil") }
            next = current.filter { !targets.contains($0) }
        }
        if next == current { return [] }
        return [.link(identity, relation: relation.name, targets: next.map(graph.identity(of:)))]
    }

    /// The objects an assigned value names: references as they are; keys (`#12`, `12`,
    /// `#"uuid"`) looked up in the relation's target types; null and `{}` name none.
    private func targetRefs(_ operand: Operand, _ relation: RelationColumn, at range: SourceRange) throws -> [ObjectRef] {
        var out: [ObjectRef] = []
        let accepted = acceptedTypes(relation)
        for value in operand.listItems.flatMap({ v -> [Value] in if case .array(let items) = v { return items }; return [v] }) {
            switch value {
            case .null: continue
            case .reference(let ref):
                guard accepted?.contains(Int(ref.type)) ?? true else {
                    throw QueryError("\(graph.label(of: ref)) is not a \(targetTypeNames(relation))", at: range)
                }
                guard graph.table(ref).isLive(Int(ref.row)) else { throw QueryError("\(graph.label(of: ref)) is deleted", at: range) }
                out.append(ref)
            default:
                guard let key = ObjectID(keyValue: value) else {
                    throw QueryError("'\(relation.name)' takes an object", at: range, hint: "like #12 or #\"key\" (the key as `id` shows it)")
                }
                let types = accepted.map { Array($0).sorted() } ?? Array(graph.types.indices)
                guard let ref = types.lazy.compactMap({ self.graph.ref(type: self.graph.types[$0], id: key) }).first else {
                    // A key every type shares (Persist's): name what it is instead.
                    if accepted != nil, relation.foreignKey == nil, let other = graph.ref(id: key) {
                        throw QueryError("\(graph.label(of: other)) is not a \(targetTypeNames(relation))", at: range,
                                         hint: "'\(relation.name)' holds \(targetTypeNames(relation)) objects")
                    }
                    throw QueryError("no \(targetTypeNames(relation)) has key \(key)", at: range)
                }
                out.append(ref)
            }
        }
        return out
    }

    /// The types a target of `relation` may have, or nil when the store says nothing of them: a
    /// declared foreign key's table, else the types its objects already point to (Persist's
    /// relations, Core Data's model), with their subtypes.
    private func acceptedTypes(_ relation: RelationColumn) -> Set<Int>? {
        let declared = relation.foreignKey.map { [$0.targetType] } ?? relation.targetTypes
        guard !declared.isEmpty else { return nil }
        var out = Set(declared)
        for t in declared { out.formUnion(graph.types[t].lineage.descendants) }
        return out
    }

    private func targetTypeNames(_ relation: RelationColumn) -> String {
        let names = (relation.foreignKey.map { [$0.targetType] } ?? relation.targetTypes).map { graph.types[$0].name.rawValue }
        return names.isEmpty ? "object" : names.joined(separator: " or ")
    }

    /// The value a foreign-key column holds to point at `target`: its key, or the referenced column's value.
    private func keyValue(of target: ObjectRef, for fk: ForeignKey, at range: SourceRange) throws -> Value {
        guard Int(target.type) == fk.targetType else {
            throw QueryError("\(graph.label(of: target)) is not a \(graph.types[fk.targetType].name)", at: range)
        }
        if let attribute = fk.targetAttribute { return graph.table(target).value(row: Int(target.row), named: attribute) }
        return graph.id(of: target).value
    }

    // MARK: Deleting

    /// The edits that delete `refs`, following each declared foreign key's `ON DELETE`: cascade
    /// deletes the referring objects too, set null / set default change their column; restrict
    /// and no action refuse, naming the objects that still refer to the ones deleted. A relation
    /// without a foreign key (Persist) loses its edges with the object.
    public func deletions(_ refs: [ObjectRef], at range: SourceRange = SourceRange(0, 0)) throws -> [Edit] {
        var doomed = Set(refs)
        var order = refs
        var sets: [Edit] = []
        var blocked: [(ObjectRef, ObjectRef, String)] = []
        var i = 0
        while i < order.count {
            let ref = order[i]
            i += 1
            let table = graph.table(ref)
            for index in table.backlinks {
                let sourceType = graph.types[index.sourceType]
                let relation = sourceType.relations[index.relation]
                guard let fk = relation.foreignKey else { continue }
                for source in index.sources(of: Int(ref.row)) {
                    let sourceRef = ObjectRef(type: index.sourceType, row: Int(source))
                    if doomed.contains(sourceRef) || !sourceType.isLive(Int(source)) { continue }
                    switch fk.onDelete {
                    case .cascade:
                        doomed.insert(sourceRef)
                        order.append(sourceRef)
                    case .setNull:
                        if let a = sourceType.attributeIndex[fk.attribute], sourceType.attributes[a].storage?.notNull == true {
                            throw QueryError("cannot delete \(graph.label(of: ref))", at: range,
                                             hint: "\(graph.label(of: sourceRef)).\(fk.attribute) would be set to NULL (ON DELETE SET NULL), but it is NOT NULL")
                        }
                        sets.append(.set(graph.identity(of: sourceRef), attribute: fk.attribute, value: .null))
                    case .setDefault:
                        let a = sourceType.attributeIndex[fk.attribute]
                        guard let value = a.flatMap({ Editor.literal(sourceType.attributes[$0].storage?.defaultSQL) }) else {
                            throw QueryError("cannot delete \(graph.label(of: ref))", at: range,
                                             hint: "\(graph.label(of: sourceRef)).\(fk.attribute) would take its default (ON DELETE SET DEFAULT), which Loupe cannot read")
                        }
                        sets.append(.set(graph.identity(of: sourceRef), attribute: fk.attribute, value: value))
                    case .noAction, .restrict:
                        blocked.append((ref, sourceRef, relation.name))
                    case .removeLinks: break
                    }
                }
            }
        }
        // A referring object that is deleted in the same step blocks nothing.
        blocked.removeAll { doomed.contains($0.1) }
        if !blocked.isEmpty {
            let shown = blocked.prefix(8).map { "\(graph.label(of: $0.1)).\($0.2) → \(graph.label(of: $0.0))" }.joined(separator: ", ")
            throw QueryError("cannot delete: \(blocked.count) reference\(blocked.count == 1 ? "" : "s") from objects that are kept", at: range,
                             hint: shown + (blocked.count > 8 ? ", …" : "") + " (ON DELETE NO ACTION/RESTRICT); delete or change those first")
        }
        // Objects that are deleted need no column changed.
        let kept = sets.filter { edit in !doomed.contains { graph.identity(of: $0) == edit.object } }
        return kept + order.map { .remove(graph.identity(of: $0)) }
    }

    // MARK: Keys

    /// The key a new object of `type` gets: as the store would assign it, or as given (in
    /// `values`, which gains the key column when the store assigns it into one).
    private func newKey(for type: TypeTable, values: inout [String: Value], at range: SourceRange) throws -> ObjectID {
        func nextInteger(_ ids: [ObjectID]) -> Int64 {
            var best: Int64 = 0
            for id in ids { if case .int(let i) = id, i > best { best = i } }
            return best == Int64.max ? best : best + 1
        }
        switch type.keyPolicy {
        case .globalInteger:
            return .int(nextInteger(graph.types.flatMap(\.ids) + [.int(storedKeyMaximum)] + graph.types.map { .int($0.keyFloor) }))
        case .rowid:
            return .int(nextInteger(type.ids + [.int(storedTypeKeyMaxima[type.index] ?? 0), .int(type.keyFloor)]))
        case .column(let name, let autoIncrements):
            if let given = values[name], !given.isNull {
                guard let key = ObjectID(keyValue: given) else { throw QueryError("\(name) cannot be a key: \(ValueFormatter.plain(given))", at: range) }
                if graph.ref(type: type, id: key) != nil { throw QueryError("\(type.name) #\(key) exists already", at: range, hint: "\(name) must be unique") }
                return key
            }
            guard autoIncrements else { throw QueryError("insert \(type.name) needs its key '\(name)'", at: range, hint: "give \(name): …") }
            let key = nextInteger(type.ids + [.int(storedTypeKeyMaxima[type.index] ?? 0), .int(type.keyFloor)])
            values[name] = .int(key)
            return .int(key)
        case .columns(let names):
            let parts = try names.map { name -> ObjectID in
                guard let v = values[name], let key = ObjectID(keyValue: v) else {
                    throw QueryError("insert \(type.name) needs every key column", at: range, hint: "give " + names.joined(separator: ", "))
                }
                return key
            }
            let key = ObjectID.composite(parts)
            if graph.ref(type: type, id: key) != nil { throw QueryError("\(type.name) #\(key) exists already", at: range) }
            return key
        case .rowNumber:
            throw QueryError("\(type.name) cannot be changed", at: range, hint: "it has no key of its own")
        }
    }

    /// Refuses an insert that leaves out a `NOT NULL` column without a default.
    private func checkRequiredColumns(_ type: TypeTable, given values: [String: Value], at range: SourceRange) throws {
        let missing = type.attributes.filter { a in
            guard let s = a.storage, s.notNull, !s.isGenerated, s.defaultSQL == nil else { return false }
            if case .column(let key, true) = type.keyPolicy, key == a.name { return false }
            return values[a.name].map(\.isNull) ?? true
        }
        if !missing.isEmpty {
            throw QueryError("insert \(type.name) needs " + missing.map(\.name).joined(separator: ", "), at: range,
                             hint: "NOT NULL without a default")
        }
    }

    // MARK: Values

    /// Checks `value` for the attribute `name` of `type` (an existing column at `index`, or a new
    /// key of a document) and returns it as it will be stored (a date for a date column, an
    /// integer for a whole double in an integer column).
    func check(_ value: Value, for name: String, index: Int?, in type: TypeTable, at range: SourceRange, isInsert: Bool) throws -> Value {
        if case .reference(let r) = value {
            throw QueryError("'\(name)' is an attribute, not a relation", at: range, hint: "\(graph.label(of: r)) is an object; give a value")
        }
        guard let index else { return try wholeSeconds(value, name, at: range) }   // a new key of a schemaless document
        let column = type.attributes[index]
        guard let storage = column.storage else { return try wholeSeconds(try checkAgainstKinds(value, column, type: type, at: range), name, at: range) }
        if storage.isGenerated { throw QueryError("\(name) is a generated column", at: range, hint: "SQLite computes it") }
        if !isInsert, storage.isPrimaryKey {
            throw QueryError("\(name) is \(type.name)'s key", at: range, hint: "an object's key cannot change; insert a new object instead")
        }
        if value.isNull {
            if storage.notNull { throw QueryError("\(name) is NOT NULL", at: range, hint: "give a value") }
            return .null
        }
        if storage.holdsJSON { return value }
        let declared = storage.declaredType.isEmpty ? "no declared type" : storage.declaredType
        func refuse() -> QueryError {
            QueryError("\(ValueFormatter.kindName(value)) cannot go into \(type.name).\(name) (\(declared))", at: range,
                       hint: Editor.hint(for: storage))
        }
        let isDateColumn = storage.declaredType.uppercased().contains("DATE") || storage.declaredType.uppercased().contains("TIMESTAMP")
        if isDateColumn {
            switch value {
            case .date: return value
            case .string(let s): if let d = DateText.parse(s) { return .date(d) }; throw refuse()
            default: break
            }
        }
        switch storage.affinity {
        case .integer:
            switch value {
            case .int: return value
            case .bool(let b): return .int(b ? 1 : 0)
            case .double(let d): if case .int(let i) = ObjectID.number(d) { return .int(i) }; return value   // SQLite keeps a fraction as REAL
            default: throw refuse()
            }
        case .real, .numeric:
            switch value {
            case .int, .double: return value
            // Every digit where the column keeps them (`numeric`), else the double a REAL keeps.
            case .decimal(let d): return storage.affinity == .numeric ? value : .double(d.double)
            case .bool(let b): return .int(b ? 1 : 0)
            default: throw refuse()
            }
        case .text:
            if case .string = value { return value }
            throw refuse()
        case .blob:
            switch value {
            case .array, .object: throw refuse()
            default: return value
            }
        }
    }

    /// A date for a document (Persist's), which its writer keeps to the second
    /// (`yyyy-MM-dd HH:mm:ss ZZZZZ`, as Persist's DateFormatter reads it back): one with a
    /// fraction of a second is refused rather than committed without it.
    private func wholeSeconds(_ value: Value, _ name: String, at range: SourceRange) throws -> Value {
        guard case .date(let d) = value else { return value }
        let seconds = d.timeIntervalSince1970
        guard seconds.rounded(.down) != seconds else { return value }
        throw QueryError("\(DateText.iso(d)) has a fraction of a second, which \(graph.formatName) does not keep", at: range,
                         hint: "its dates are written to the second; give \(name) a whole second, like \(DateText.iso(Date(timeIntervalSince1970: seconds.rounded(.down))))")
    }

    /// A document's attribute takes the kinds it holds in the file (the app decodes it into one
    /// Swift type): an integer where integers are, a whole number where integers are, a date
    /// (or text that reads as one) where dates are. A new or mixed attribute takes anything.
    private func checkAgainstKinds(_ value: Value, _ column: AttributeColumn, type: TypeTable, at range: SourceRange) throws -> Value {
        let kinds = column.kinds.subtracting(.null)
        if value.isNull || kinds.isEmpty || kinds.contains(value.kind) { return value }
        switch value {
        case .int where kinds.contains(.double): return value
        case .double(let d) where kinds.contains(.integer):
            if case .int(let i) = ObjectID.number(d) { return .int(i) }
        case .string(let s) where kinds.contains(.date):
            if let d = DateText.parse(s) { return .date(d) }
        default: break
        }
        throw QueryError("\(ValueFormatter.kindName(value)) cannot go into \(type.name).\(column.name)", at: range,
                         hint: "it holds \(kinds.description) in every object that has it")
    }

    /// What a column takes, in words.
    static func hint(for storage: ColumnStorage) -> String {
        let upper = storage.declaredType.uppercased()
        if upper.contains("DATE") || upper.contains("TIMESTAMP") { return "give a date, like 2024-01-31 or 2024-01-31T10:20:30Z" }
        switch storage.affinity {
        case .integer: return "give an integer"
        case .real, .numeric: return "give a number"
        case .text: return "give text in quotes"
        case .blob: return "give a value"
        }
    }

    /// The value of a simple `DEFAULT` literal (a number, a quoted string, NULL), or nil.
    static func literal(_ sql: String?) -> Value? {
        guard var text = sql?.trimmingCharacters(in: .whitespaces) else { return nil }
        while text.hasPrefix("(") && text.hasSuffix(")") { text = String(text.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces) }
        if text.uppercased() == "NULL" { return .null }
        if let i = Int64(text) { return .int(i) }
        if let d = Double(text) { return .double(d) }
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") {
            return .string(String(text.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'"))
        }
        return nil
    }

    // MARK: The browser's edits

    /// The value a person typed for a cell, read as the column's kind: `nil` (or `null`) is null;
    /// a text column takes the text as typed (quotes around it are dropped); numbers, booleans
    /// and dates are parsed. Refused, with the reason, when it is not of the column's kind.
    public func typedValue(_ text: String, for ref: ObjectRef, attribute name: String) throws -> Value {
        try typedValue(text, in: graph.table(ref), attribute: name)
    }

    /// `text` read as attribute `name` of `type` wants it (``typedValue(_:for:attribute:)``).
    public func typedValue(_ text: String, in type: TypeTable, attribute name: String) throws -> Value {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let lower = trimmed.lowercased()
        if lower == "nil" || lower == "null" { return try check(.null, for: name, index: type.attributeIndex[name], in: type, at: SourceRange(0, 0), isInsert: false) }
        var unquoted = trimmed
        if unquoted.count >= 2, (unquoted.hasPrefix("\"") && unquoted.hasSuffix("\"")) || (unquoted.hasPrefix("'") && unquoted.hasSuffix("'")) {
            unquoted = String(unquoted.dropFirst().dropLast())
        }
        let index = type.attributeIndex[name]
        let column = index.map { type.attributes[$0] }
        // The kind the column wants: declared, else the kinds its values have.
        let wantsText: Bool = {
            if let s = column?.storage {
                let upper = s.declaredType.uppercased()
                return s.affinity == .text && !upper.contains("DATE") && !upper.contains("TIMESTAMP")
            }
            let kinds = column?.kinds.subtracting(.null) ?? []
            return kinds == .string || kinds.isEmpty && unquoted != trimmed
        }()
        let value: Value
        if wantsText {
            value = .string(unquoted)
        } else if let i = Int64(trimmed) {
            value = .int(i)
        } else if let d = Double(trimmed), d.isFinite {
            value = .double(d)
        } else if ["true", "false", "yes", "no"].contains(lower) {
            value = .bool(lower == "true" || lower == "yes")
        } else if let d = DateText.parse(unquoted) {
            value = .date(d)
        } else {
            value = .string(unquoted)
        }
        return try check(value, for: name, index: index, in: type, at: SourceRange(0, 0), isInsert: false)
    }
}

extension ValueFormatter {
    /// The kind of a value in words, for messages: `text "abc"`, `the integer 5`.
    public static func kindName(_ value: Value) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return "the boolean \(b)"
        case .int(let i): return "the integer \(i)"
        case .double(let d): return "the number \(number(d))"
        case .decimal(let d): return "the number \(d.text)"
        case .string(let s): return "the text \"\(DisplayText.fit(s, width: 40))\""
        case .date(let d): return "the date \(DateText.iso(d))"
        case .data(let d): return "\(d.count) bytes of data"
        case .array: return "an array"
        case .object: return "a nested object"
        case .reference: return "an object"
        }
    }
}
