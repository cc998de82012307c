import Foundation
import LoupeModel

/// `@count @sum @avg @min @max` over a collection (nulls are skipped; an empty sum is 0, an empty
/// average, minimum or maximum is null).
///
/// `@sum` adds numbers as the decimals they are written as (``DecimalSum``): 0.1 + 0.2 is 0.3, not
/// 0.30000000000000004, and the order of the elements never changes the answer. `@avg`
/// divides that sum by the count as decimals (39.62 / 7 is 5.66).
enum Aggregation {
    static func apply(_ aggregate: Aggregate, _ operand: Operand) -> Value {
        if aggregate == .count {
            switch operand {
            case .many(let xs): return .int(Int64(xs.count))
            case .one(.array(let xs)): return .int(Int64(xs.count))
            case .one(.string(let s)): return .int(Int64(s.count))
            case .one(.null): return .int(0)
            case .one: return .int(1)
            }
        }
        let items = operand.elements.filter { !$0.isNull }
        switch aggregate {
        case .count: return .null
        case .sum:
            var total = DecimalSum()
            for x in items { total.add(x) }
            return total.value
        case .avg:
            var total = DecimalSum()
            for x in items { total.add(x) }
            if let average = total.average { return .double(average) }
            let dates = items.compactMap { if case .date(let d) = $0 { return d.timeIntervalSince1970 } else { return nil } }
            return dates.isEmpty ? .null : .date(Date(timeIntervalSince1970: dates.reduce(0, +) / Double(dates.count)))
        case .min, .max:
            var best: Value? = nil
            for x in items {
                guard let b = best else { best = x; continue }
                if let o = ValueSemantics.order(x, b, []) {
                    if (aggregate == .min && o == .orderedAscending) || (aggregate == .max && o == .orderedDescending) { best = x }
                }
            }
            return best ?? .null
        }
    }
}

/// A sum of numbers taken as the shortest decimals that read back as them (a double's text), added
/// exactly: integers as integers, `0.1 + 0.2` as 0.3. The answer is the exact sum's nearest double
/// (an integer while every addend is one and the sum fits in 64 bits).
///
/// While the sum fits, it is one 64-bit integer of units of 10⁻ˢ; past that, a Foundation `Decimal`
/// (38 digits). A value no decimal of that range holds (an infinity, NaN, beyond 10¹²⁵) makes the
/// whole sum the doubles' plain binary sum, in order, as it was before. PostgreSQL's
/// `sum(numeric)` adds the same decimals exactly, which is why its sums of `numeric` columns are
/// answered in SQL and its sums of floats are not (`PostgresTranslation.aggregated`).
public struct DecimalSum: Sendable {
    /// The sum × 10^`scale`, while it fits.
    private var scaled: Int64 = 0
    private var scale = 0
    /// The sum once `scaled` would overflow.
    private var wide: Decimal?
    /// The doubles' binary sum, the answer when some value has no decimal here.
    private var binary = 0.0
    private var inexact = false
    private var allIntegers = true
    /// How many numbers were added.
    public private(set) var count = 0

    public init() {}

    /// Adds `v` when it is a number (anything else is skipped).
    public mutating func add(_ v: Value) {
        guard let number = v.numeric else { return }
        count += 1
        binary += number
        if case .int(let i) = v { return add(i, scale: 0) }
        allIntegers = false
        guard !inexact else { return }
        if let (m, k) = Self.shortDecimal(number) { return add(m, scale: k) }
        // More than 15 significant digits, or beyond 10¹⁵: the shortest text says the decimal.
        guard number.isFinite, number == 0 || (1e-120...1e120).contains(abs(number)),
              let d = Decimal(string: number.description), !d.isNaN else { inexact = true; return }
        wide = (wide ?? widened) + d
    }

    /// The sum: an integer while every addend was one and it fits, else the nearest double.
    public var value: Value {
        if allIntegers, wide == nil { return .int(scaled) }
        return .double(double)
    }

    /// The sum as the nearest double.
    public var double: Double {
        if inexact { return binary }
        if wide == nil, scaled.magnitude < 1 << 53, scale <= 22 { return Double(scaled) / Self.powers[scale] }
        let d = wide ?? widened
        return d.isNaN ? binary : Double(d.description) ?? binary
    }

    /// The sum divided by the count, as decimals of 38 digits, to the nearest double (nil for
    /// none). PostgreSQL's `numeric` division, given 40 decimal places, gives the same double.
    public var average: Double? {
        guard count > 0 else { return nil }
        if inexact { return binary / Double(count) }
        let quotient = (wide ?? widened) / Decimal(count)
        return quotient.isNaN ? binary / Double(count) : Double(quotient.description) ?? binary / Double(count)
    }

    /// `m × 10^-k` with `m` of at most 15 digits when `x` is such a decimal's nearest double: then
    /// it is the shortest decimal that reads back as `x` (two decimals of 15 digits never share a
    /// double). Nil otherwise.
    static func shortDecimal(_ x: Double) -> (Int64, Int)? {
        guard x.isFinite else { return nil }
        for k in 0...15 {
            let m = (x * powers[k]).rounded()
            if abs(m) >= 1e15 { return nil }
            if m / powers[k] == x { return (Int64(m), k) }
        }
        return nil
    }

    private static let powers: [Double] = (0...22).map { pow(10, Double($0)) }
    private static let intPowers: [Int64] = (0...18).map { k in (0..<k).reduce(Int64(1)) { p, _ in p * 10 } }

    /// Adds `m × 10^-k`, in 64 bits while the sum fits there.
    private mutating func add(_ m: Int64, scale k: Int) {
        if wide == nil, let (s, sc) = Self.added(scaled, scale, m, k) { scaled = s; scale = sc; return }
        wide = (wide ?? widened) + Self.decimal(m, k)
    }

    /// `a × 10^-ka + b × 10^-kb` at the larger scale, nil when it overflows 64 bits.
    private static func added(_ a: Int64, _ ka: Int, _ b: Int64, _ kb: Int) -> (Int64, Int)? {
        let k = max(ka, kb)
        guard k - min(ka, kb) < intPowers.count else { return nil }
        let (x, ox) = a.multipliedReportingOverflow(by: intPowers[k - ka])
        let (y, oy) = b.multipliedReportingOverflow(by: intPowers[k - kb])
        let (s, os) = x.addingReportingOverflow(y)
        return ox || oy || os ? nil : (s, k)
    }

    private static func decimal(_ m: Int64, _ k: Int) -> Decimal {
        Decimal(sign: m < 0 ? .minus : .plus, exponent: -k, significand: Decimal(m.magnitude))
    }

    /// The 64-bit sum as a `Decimal`.
    private var widened: Decimal { Self.decimal(scaled, scale) }
}
