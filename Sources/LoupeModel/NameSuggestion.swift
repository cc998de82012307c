import DisplayText
import Foundation

/// "Did you mean …?" by edit distance, as swift-argument-parser suggests subcommands.
public enum NameSuggestion {
    /// The candidate nearest to `name` (case-insensitive Levenshtein distance), if it is near enough:
    /// at most a third of the name's length, and at least 1, apart.
    ///
    /// A candidate is also compared as it is shown (``DisplayText/escaped(_:)``: `title\u{1B}]0;x`)
    /// and without the characters that escaping shows: a name that differs from one typed only by
    /// control characters is suggested, whichever of the two the user copied.
    public static func closest(to name: String, in candidates: [String]) -> String? {
        let target = Array(name.lowercased())
        var best: (String, Int)?
        for c in candidates {
            var forms = [c]
            if c.unicodeScalars.contains(where: DisplayText.needsEscape) {
                forms += [DisplayText.escaped(c), String(String.UnicodeScalarView(c.unicodeScalars.filter { !DisplayText.needsEscape($0) }))]
            }
            let d = forms.map { distance(target, Array($0.lowercased())) }.min()!
            if d < (best?.1 ?? Int.max) { best = (c, d) }
        }
        guard let (candidate, d) = best, d <= max(1, (target.count + 2) / 3) else { return nil }
        return candidate
    }

    /// Levenshtein distance.
    public static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
