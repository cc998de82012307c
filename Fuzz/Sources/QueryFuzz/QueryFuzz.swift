import Foundation
import LoupeModel
import LoupeQuery

/// libFuzzer's entry point for statements: any bytes, read as UTF-8, are parsed; a statement that
/// parses is printed back in the language and must reparse to the same tree, then runs on a small
/// graph with every kind of value and relation, and its result renders in every format. Any crash,
/// trap or hang (libFuzzer's `-timeout`) is a finding; errors are expected.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStatement(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let statement = try? Parser.parse(source) else { return 0 }
    if let text = statement.sourceText {
        guard let again = try? Parser.parse(text), again.description == statement.description else {
            fatalError("print → parse changed the statement: \(source.debugDescription) printed as \(text.debugDescription)")
        }
    }
    if case .dotCommand = statement { return 0 }
    guard let result = try? FuzzGraph.engine.run(statement, currentType: FuzzGraph.book) else { return 0 }
    for mode in OutputMode.allCases { _ = result.render(mode, graph: FuzzGraph.engine.graph) }
    return 0
}

/// Books, authors and tags with nulls, numbers of both kinds, dates, strings with escapes and
/// wide characters, arrays, nested objects, to-one, to-many and self relations.
enum FuzzGraph {
    static let engine: QueryEngine = {
        let b = GraphBuilder(formatName: "fuzz")
        let author = b.type("Author"), book = b.type("Book"), tag = b.type("Tag")
        func add(_ t: Int, _ id: Int64, _ values: [(String, Value)]) -> ObjectRef {
            let ref = b.addObject(type: t, id: .int(id))
            for (k, v) in values { b.set(v, type: t, row: Int(ref.row), attribute: b.attribute(k, of: t)) }
            return ref
        }
        let a1 = add(author, 1, [("name", .string("Ursula")), ("born", .int(1929))])
        let a2 = add(author, 2, [("name", .string("山田 🚀\u{1B}[31m")), ("born", .double(1840.5))])
        let t1 = add(tag, 10, [("label", .string("sf"))]), t2 = add(tag, 11, [("label", .null)])
        var books: [ObjectRef] = []
        for i in 0..<8 {
            let pages: Value = i % 3 == 0 ? .null : .int(Int64(i * 97))
            let published = Value.date(Date(timeIntervalSince1970: Double(i) * 1e8))
            let edition = Value.object(NestedObject([("n", .int(Int64(i))), ("x", .array([.null]))]))
            var values: [(String, Value)] = [("title", .string("Book \(i) é\u{301}")), ("pages", pages), ("price", .double(Double(i) * 1.5))]
            values += [("published", published), ("keywords", .array([.string("a"), .int(Int64(i))])), ("edition", edition)]
            books.append(add(book, Int64(100 + i), values))
        }
        let by = b.relation("author", of: book), tagged = b.relation("tags", of: book, toMany: true), next = b.relation("next", of: book)
        for (i, ref) in books.enumerated() {
            b.addEdge(from: ref, relation: by, to: i % 2 == 0 ? a1 : a2)
            b.addEdge(from: ref, relation: tagged, to: t1)
            if i % 3 == 0 { b.addEdge(from: ref, relation: tagged, to: t2) }
            b.addEdge(from: ref, relation: next, to: books[(i + 1) % books.count])
        }
        return QueryEngine(graph: b.finish())
    }()
    static let book: TypeTable? = engine.graph.type(named: "Book")
}
