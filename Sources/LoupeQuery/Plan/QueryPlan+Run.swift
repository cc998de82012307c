import Foundation
import LoupeModel

/// What running a plan came to: the answer and the engine that gave it, or that the plan's next
/// step is the load (which the caller makes); with the engines that declined on the way, and why.
public enum PlanOutcome<Answer> {
    case answered(Answer, by: PlanEngine, declines: [Decline])
    case load(declines: [Decline])
}

/// What asks a plan's engines over one store (``QueryPlan/run(_:)`` runs the steps in order).
/// ``StoreSteps`` asks a store's ``QuerySource`` and its pages; `loupe query` writes SQL's rows
/// as they are read.
public protocol PlanSteps {
    associatedtype Answer
    /// SQL's answer, nil when SQL cannot say the statement exactly (a ``Decline`` thrown says
    /// another reason it did not answer).
    func sql(_ statement: Statement) throws -> Answer?
    /// The chunks' answer, nil when the statement is not one they read; throws
    /// ``RelationPartUnanswered`` for a part through relations SQL cannot give them.
    func chunks(_ statement: Statement) throws -> Answer?
}

/// A store read a page at a time: its ``QuerySource`` (nil: none), its pages (nil: none) and
/// their schema graph when the caller holds it. `declaring`: attributes staged edits name.
public struct StoreSteps: PlanSteps {
    public let source: (any QuerySource)?
    public let pages: PageSource?
    public let schema: ObjectGraph?
    public let kind: StoreKind
    public var declaring: [String: Set<String>] = [:]
    public var progress: (Int, Int) -> Void = { _, _ in }
    public let isCancelled: @Sendable () -> Bool

    public init(source: (any QuerySource)?, pages: PageSource?, schema: ObjectGraph?, kind: StoreKind, declaring: [String: Set<String>] = [:],
                progress: @escaping (Int, Int) -> Void = { _, _ in }, isCancelled: @escaping @Sendable () -> Bool) {
        self.source = source
        self.pages = pages
        self.schema = schema
        self.kind = kind
        self.declaring = declaring
        self.progress = progress
        self.isCancelled = isCancelled
    }

    public func sql(_ statement: Statement) throws -> SourceAnswer? {
        try source?.answerOrDecline(statement, declaring: declaring, isCancelled: isCancelled)
    }

    public func chunks(_ statement: Statement) throws -> SourceAnswer? {
        guard let pages, let plan = try schema.map({ ChunkedAnswer(statement, source: pages, schema: $0) }) ?? ChunkedAnswer.plan(statement, over: pages) else { return nil }
        if isCancelled() { throw CancellationError() }
        let kind = self.kind, declaring = self.declaring, isCancelled = self.isCancelled
        // The parts through relations are asked of SQL within the dialect's limits (a part
        // beyond them is split, or refused, as one SQL cannot say).
        let parts = source.map { sql in { (part: Statement) throws -> SourceAnswer? in
            guard Planner.sqlDeclines(part, kind) == nil else { return nil }
            do { return try sql.answer(part, declaring: declaring, isCancelled: isCancelled) } catch where DialectLimitError.limit(in: error) != nil { return nil }
        } }
        return try plan.answer(statement, over: pages, relationParts: parts, progress: progress, isCancelled: isCancelled)
    }
}

/// A statement no step of its plan answers: every engine declined, each with its reason. Its
/// description is the refusal users read; `remedy` ends it (`raise --memory-budget to load it`).
public struct PlanRefusal: Error, CustomStringConvertible, Sendable {
    public let kind: StoreKind
    public let declines: [Decline]
    public var remedy: String?

    public init(kind: StoreKind, declines: [Decline], remedy: String? = nil) {
        self.kind = kind
        self.declines = declines
        self.remedy = remedy
    }

    /// `a whole load (≈ 3.2 GB) is over the 2.0 GB memory budget, and SQL cannot answer this
    /// statement exactly over a Persist file (…), and the chunks cannot answer it (…); raise
    /// --memory-budget to load it`: the load's reason, then SQL's, then the chunks'.
    public var description: String {
        var parts: [String] = []
        // Paged mode's refusals need not say the store is not loaded.
        if let memory = declines.first(where: { $0.engine == .memory && $0.reason != .leftOutByChoice && $0.reason != .notLoaded }) { parts.append(memory.why) }
        let ordered = declines.filter { $0.engine == .sql } + declines.filter { $0.engine == .chunks }
        for decline in ordered where decline.reason != .leftOutByChoice {
            switch decline.engine {
            case .sql: parts.append("SQL cannot answer this statement exactly over \(kind.title) (\(decline.why))")
            case .chunks: parts.append("the chunks cannot answer it (\(decline.why))")
            case .memory: break
            }
        }
        if parts.isEmpty { parts.append("no engine was asked this statement") }
        return parts.joined(separator: ", and ") + (remedy.map { "; \($0)" } ?? "")
    }
}

extension QueryPlan {
    /// Asks the plan's steps in order through `steps`: SQL, the chunks, then the load (returned
    /// for the caller to make). The statement's own errors are thrown as they are; when every
    /// step declines, ``PlanRefusal`` says why each did.
    public func run<Steps: PlanSteps>(_ steps: Steps) throws -> PlanOutcome<Steps.Answer> {
        var declines = declined
        for step in self.steps {
            switch step {
            case .memory:
                return .load(declines: declines)
            case .sql:
                do {
                    if let found = try steps.sql(statement) { return .answered(found, by: .sql, declines: declines) }
                    declines.append(Decline(.sql, .untranslated(uses: SQLConstruct.used(by: statement, among: kind.leaves)), over: kind))
                } catch let decline as Decline {
                    declines.append(decline)
                } catch let error where DialectLimitError.limit(in: error) != nil {
                    declines.append(Decline(.sql, .failed(DialectLimitError.limit(in: error)!), over: kind))
                }
            case .chunks:
                do {
                    if let found = try steps.chunks(statement) { return .answered(found, by: .chunks, declines: declines) }
                    declines.append(Decline(.chunks, .notChunked, over: kind))
                } catch let error as RelationPartUnanswered {
                    declines.append(Decline(.chunks, .relationPart(error.description), over: kind))
                } catch let decline as Decline {
                    declines.append(decline)
                }
            }
        }
        throw PlanRefusal(kind: kind, declines: declines)
    }

    /// The keys of the objects an edit's selection names (the plan of ``Mutation/selection``),
    /// found as the plan finds them; nil when the plan's next step is the load.
    public func selectedKeys(_ steps: StoreSteps) throws -> [ObjectID]? {
        guard case .answered(let found, _, _) = try run(steps) else { return nil }
        guard case .objects(_, let keys) = found else { throw QueryError("the store did not list objects for this where", at: SourceRange(0, 0)) }
        return keys
    }
}

extension SQLConstruct {
    /// The constructs of `candidates` that `statement` is seen to use from its tree alone
    /// (arithmetic, MATCHES, two paths compared); the rest depend on the store's values.
    static func used(by statement: Statement, among candidates: [SQLConstruct]) -> [SQLConstruct] {
        var seen = Set<SQLConstruct>()
        func isArithmetic(_ e: Expression) -> Bool {
            if case .arithmetic = e { return true }
            if case .negate(let inner, _) = e { return isArithmetic(inner) }
            return false
        }
        func isNumber(_ e: Expression) -> Bool {
            switch e {
            case .literal(.integer, _), .literal(.decimal, _): return true
            case .negate(let inner, _): return isNumber(inner)
            default: return false
            }
        }
        func visit(_ e: Expression) {
            switch e {
            case .arithmetic(_, let a, let b, _):
                seen.formUnion([.arithmetic, .arithmeticThroughRelationships])
                visit(a); visit(b)
            case .negate(let inner, _): visit(inner)
            case .list(let items, _): items.forEach(visit)
            case .subqueryCount(_, _, let p, _): visit(p)
            case .literal, .path: break
            }
        }
        func visit(_ p: Predicate) {
            switch p {
            case .and(let ps), .or(let ps): ps.forEach(visit)
            case .not(let inner): visit(inner)
            case .comparison(let c):
                if c.op == .matches { seen.insert(.matches) }
                if case .path = c.lhs, case .path = c.rhs { seen.insert(.pathComparisons) }
                if isArithmetic(c.lhs) && !isNumber(c.rhs) || isArithmetic(c.rhs) && !isNumber(c.lhs) { seen.insert(.arithmeticNotAgainstNumber) }
                visit(c.lhs); visit(c.rhs)
            case .between(_, let e, let lo, let hi, _): [e, lo, hi].forEach(visit)
            case .truthy(let e): visit(e)
            case .constant: break
            }
        }
        if let filter = statement.pushdownRoot?.predicate { visit(filter) }
        if case .query(let q) = statement, let columns = q.projection {
            columns.forEach { visit($0.expression) }
            if columns.contains(where: { isArithmetic($0.expression) }) { seen.insert(.arithmeticNotAgainstNumber) }
        }
        return candidates.filter(seen.contains)
    }
}
