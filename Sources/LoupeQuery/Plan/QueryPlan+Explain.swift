import Foundation
import LoupeModel

/// A plan as `explain` prints it: each engine in order, what it did (answered, declined with
/// why, left out while planning, not needed), the SQL sent with its bound values, and the
/// estimated and actual rows. Made by running the plan with ``SQLTrace`` recording.
public struct PlanReport: Sendable, Encodable {
    public enum Outcome: String, Sendable, Encodable { case answered, declined, leftOut = "left out", notNeeded = "not needed" }

    public struct Step: Sendable, Encodable {
        public let engine: PlanEngine
        public let title: String
        public let outcome: Outcome
        /// Why it declined or was left out.
        public let reason: String?
        /// How it answered (`what its names reach was loaded`), when there is more to say.
        public var detail: String?
    }

    public let statement: String
    public let store: StoreKind
    public let dialect: String?
    public let steps: [Step]
    /// The SQL sent while the statement ran, in order, values bound.
    public let sql: [String]
    public let estimatedRows: Int?
    /// The answer's rows (a count is one), and the milliseconds it took; nil when not run.
    public let rows: Int?
    public let milliseconds: Double?

    /// The report of `plan` after running it: `answeredBy` (nil: nothing answered), the
    /// declines met, what was sent, the rows and time.
    public init(_ plan: QueryPlan, source: String, answeredBy: PlanEngine?, declines: [Decline], detail: String? = nil,
                sql: [String], rows: Int?, milliseconds: Double?) {
        statement = source
        store = plan.kind
        dialect = plan.kind.dialect?.rawValue
        estimatedRows = plan.estimatedRows
        self.sql = sql
        self.rows = rows
        self.milliseconds = milliseconds
        var steps: [Step] = []
        for engine in plan.steps {
            let title = engine.title(over: plan.kind)
            if engine == answeredBy {
                steps.append(Step(engine: engine, title: title, outcome: .answered, reason: nil, detail: detail))
            } else if let declined = declines.last(where: { $0.engine == engine && !plan.declined.contains($0) }) {
                steps.append(Step(engine: engine, title: title, outcome: .declined, reason: declined.why))
            } else {
                steps.append(Step(engine: engine, title: title, outcome: .notNeeded, reason: nil))
            }
        }
        for declined in plan.declined {
            steps.append(Step(engine: declined.engine, title: declined.engine.title(over: plan.kind), outcome: .leftOut, reason: declined.why))
        }
        self.steps = steps
    }

    /// The tree `explain` prints.
    public var text: String {
        let shown = statement.count > 200 ? statement.prefix(200) + "… (\(statement.count) characters)" : statement
        var lines = ["plan for \(shown)", "├─ store: \(store.title)" + (dialect.map { " (\($0))" } ?? "")
                     + (estimatedRows.map { ", ≈ \($0) objects of the type asked" } ?? "")]
        for (n, step) in steps.enumerated() {
            let last = n == steps.count - 1 && sql.isEmpty && rows == nil
            var line = "\(last ? "└─" : "├─") \(step.title): \(step.outcome.rawValue)"
            if let reason = step.reason { line += " — \(reason)" }
            if let detail = step.detail { line += " (\(detail))" }
            lines.append(line)
        }
        for (n, statement) in sql.enumerated() {
            lines.append("\(n == sql.count - 1 && rows == nil ? "└─" : "├─") sql: \(statement)")
        }
        if let rows {
            lines.append("└─ " + "\(rows) row\(rows == 1 ? "" : "s")" + (milliseconds.map { String(format: " in %.1f ms", $0) } ?? ""))
        }
        return lines.joined(separator: "\n")
    }

    /// The same as JSON, for scripts.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

extension PlanReport {
    /// `.explain STATEMENT` over a store read a page at a time (both paged REPLs): `text`
    /// planned as paged mode plans it, run through `steps` with the SQL it sends recorded (the
    /// answer is dropped), and reported; the statement's own errors are thrown.
    public static func paged(_ text: String, steps: StoreSteps) throws -> PlanReport {
        let statement = try Parser.parse(text)
        let plan = Planner.plan(statement, PlanSituation(kind: steps.kind, paged: true, counts: PlanSituation.counts(steps.pages)))
        let started = DispatchTime.now().uptimeNanoseconds
        SQLTrace.start()
        var answered: PlanEngine?, declines = plan.declined, rows: Int?
        do {
            if case .answered(let found, let engine, let met) = try plan.run(steps) { (answered, declines, rows) = (engine, met, found.rowCount) }
        } catch let refusal as PlanRefusal {
            declines = refusal.declines
        } catch {
            _ = SQLTrace.stop()
            throw error
        }
        return PlanReport(plan, source: text, answeredBy: answered, declines: declines, sql: SQLTrace.stop(), rows: rows,
                          milliseconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
    }
}

extension QueryResult {
    /// How many rows the result prints (a count is one); nil for a dot-command's text.
    public var rowCount: Int? {
        switch self {
        case .objects(_, let refs): return refs.count
        case .projection(_, let rows, _): return rows.count
        case .count: return 1
        case .groups(_, let rows, _): return rows.count
        case .message: return nil
        }
    }
}

extension SourceAnswer {
    /// How many rows the answer prints (a count is one).
    public var rowCount: Int {
        switch self {
        case .count: return 1
        case .objects(_, let keys): return keys.count
        case .projection(_, let rows, _): return rows.count
        case .groups(_, let rows, _): return rows.count
        }
    }
}
