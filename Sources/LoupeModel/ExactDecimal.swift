/// A decimal number kept digit for digit: a PostgreSQL `numeric` (or a literal) with more
/// significant digits than a double holds exactly (more than 15).
///
/// Its text is shown, written as JSON and written back to the store as it was read; statements
/// compare and compute with its nearest double, as they do every number (QUERY.md: numbers compare
/// numerically), so every engine agrees. Two decimals are the same value when their digits are the
/// same (`1.50` and `1.5` are one value; a change of the last digit is a change).
public struct ExactDecimal: Hashable, Sendable, CustomStringConvertible {
    /// The text as read (`-12345678901234567890.1234567890`).
    public let text: String
    /// The nearest double, for comparisons and arithmetic.
    public let double: Double
    /// The digits without leading or trailing zeros, the sign and the decimal point's place: what
    /// equality and hashing read.
    private let normal: String

    /// Reads `[-|+]digits[.digits]`; nil for anything else (exponents, NaN, infinities: those are
    /// doubles already).
    public init?(_ text: String) {
        var body = Substring(text)
        var negative = false
        if let sign = body.first, sign == "-" || sign == "+" { negative = sign == "-"; body = body.dropFirst() }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard !body.isEmpty, parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
              !(parts.first ?? "").isEmpty || (parts.count == 2 && !parts[1].isEmpty),
              let double = Double(text), double.isFinite else { return nil }
        let whole = parts[0].drop { $0 == "0" }
        var fraction = parts.count == 2 ? Substring(parts[1]) : ""
        while fraction.last == "0" { fraction = fraction.dropLast() }
        let zero = whole.isEmpty && fraction.isEmpty
        self.text = text
        self.double = double
        self.normal = (negative && !zero ? "-" : "") + whole + "." + fraction
    }

    /// The value a store's decimal text stands for: a double when a double says it exactly
    /// (15 significant digits or fewer), else the exact decimal; nil when it is not a number.
    public static func value(_ text: String) -> Value? {
        if let exact = ExactDecimal(text), exact.significantDigits > 15 { return .decimal(exact) }
        return Double(text).map(Value.double)
    }

    /// The same digits with the other sign.
    public var negated: ExactDecimal {
        let digits = text.hasPrefix("-") || text.hasPrefix("+") ? String(text.dropFirst()) : text
        return ExactDecimal(text.hasPrefix("-") ? digits : "-" + digits) ?? self
    }

    /// How many digits from the first non-zero one to the last non-zero one.
    public var significantDigits: Int {
        let digits = normal.utf8.filter { $0 >= 48 && $0 <= 57 }
        let first = digits.firstIndex { $0 != 48 }, last = digits.lastIndex { $0 != 48 }
        guard let first, let last else { return 0 }
        return last - first + 1
    }

    public var description: String { text }

    public static func == (a: ExactDecimal, b: ExactDecimal) -> Bool { a.normal == b.normal }
    public func hash(into h: inout Hasher) { h.combine(normal) }
}
