/// How text a store holds takes cells on a terminal: the one escaping rule and the one width rule
/// of the whole program (the browser, the command line's tables, carets and messages).
///
/// **Escaping.** Data is data, never a terminal command, and never invisible. These scalars are
/// shown as escapes (`\n`, `\t`, `\r`, else `\u{202E}`):
/// - C0 and C1 controls and DEL (they drive the terminal: colours, titles, OSC 52 clipboard writes);
/// - line and paragraph separators (U+2028, U+2029);
/// - every format character (Unicode category Cf): bidirectional overrides and isolates (U+202A–
///   U+202E, U+2066–U+2069, U+200E/F, U+061C), zero-width spaces and joiners (U+200B–U+200D,
///   U+2060, U+FEFF), soft hyphens, tags. Terminals disagree about their width (or reorder the
///   line around them), so drawing them raw shifts rows and leaves stale cells. An emoji joined
///   by U+200D is therefore shown as its parts with the joiner escaped between them.
/// - a combining mark at the very start of a text (it would combine with whatever cell is left of it).
///
/// **Width.** After escaping, every grapheme takes 1 or 2 cells: 2 when it is East Asian wide or
/// fullwidth, or an emoji with emoji presentation (or a variation selector 16), else 1. Combining
/// marks inside a grapheme take no cell of their own.
///
/// **Cost.** Every function that measures, cuts or pads stops reading once it has enough to fill
/// the width asked for, so drawing a 50 MB value costs what drawing its first cells costs.
public enum DisplayText {
    /// True for a scalar that is shown escaped (see the type's documentation).
    @inlinable
    public static func needsEscape(_ u: Unicode.Scalar) -> Bool {
        let v = u.value
        if v < 0x20 || v == 0x7F { return true }
        if v < 0xA0 { return v >= 0x80 }
        if v < 0x0600 { return v == 0xAD }   // soft hyphen, the only Cf below U+0600
        if v == 0x2028 || v == 0x2029 { return true }
        return u.properties.generalCategory == .format
    }

    /// The escape shown for a scalar that needs one.
    public static func escape(_ u: Unicode.Scalar) -> String {
        switch u {
        case "\n": return "\\n"
        case "\t": return "\\t"
        case "\r": return "\\r"
        default: return "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
        }
    }

    /// True for a scalar that joins the character before it (a combining mark).
    @inlinable
    public static func isCombining(_ u: Unicode.Scalar) -> Bool {
        if u.value < 0x300 { return false }
        switch u.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .spacingMark: return true
        default: return false
        }
    }

    /// The whole text with every scalar that needs it escaped. (O(n): for output that is written
    /// whole, like a table cell on the command line; screens use ``fit(_:width:)``.)
    public static func escaped(_ s: String) -> String {
        var scalars = s.unicodeScalars.makeIterator()
        guard let first = scalars.next() else { return s }
        var needs = needsEscape(first) || isCombining(first)
        if !needs { while let u = scalars.next() { if needsEscape(u) { needs = true; break } } }
        guard needs else { return s }
        var out = String.UnicodeScalarView()
        // A combining mark with nothing of its own to sit on (at the start, or after an escape,
        // whose last character it would join) is shown as an escape too.
        var needsBase = true
        for u in s.unicodeScalars {
            if needsEscape(u) || (needsBase && isCombining(u)) {
                out.append(contentsOf: escape(u).unicodeScalars)
                needsBase = true
            } else {
                out.append(u)
                needsBase = false
            }
        }
        return String(out)
    }

    /// Text of several lines (a message, a preview, a table) as it may reach a terminal: each line
    /// ``escaped(_:)``, the line breaks kept. Already escaped text comes back unchanged, so a
    /// message is safe however many hands it passed through.
    public static func escapedLines(_ s: String) -> String {
        guard !isPlainASCIILines(s) else { return s }
        return s.split(separator: "\n", omittingEmptySubsequences: false).map { escaped(String($0)) }.joined(separator: "\n")
    }

    /// True when every byte is printable ASCII or a line break.
    private static func isPlainASCIILines(_ s: String) -> Bool {
        s.utf8.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A }
    }

    /// The cells one grapheme of already escaped text takes: 1 or 2.
    @inlinable
    public static func width(of ch: Character) -> Int {
        let scalars = ch.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x1100 {
            // ASCII and Latin/Greek/Cyrillic: one cell, unless an emoji selector follows (©️).
            if scalars.count == 1 { return 1 }
            return scalars.contains { $0.value == 0xFE0F } ? 2 : 1
        }
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return isWide(first) ? 2 : 1
    }

    /// East Asian wide and fullwidth scalars, and emoji shown as emoji by default.
    @inlinable
    public static func isWide(_ u: Unicode.Scalar) -> Bool {
        let v = u.value
        if v < 0x1100 { return false }
        if (0x1100...0x115F).contains(v) || (0x231A...0x231B).contains(v) || (0x2329...0x232A).contains(v)
            || (0x2E80...0x303E).contains(v) || (0x3041...0x33FF).contains(v) || (0x3400...0x4DBF).contains(v)
            || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v) || (0xA960...0xA97F).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE10...0xFE19).contains(v)
            || (0xFE30...0xFE6F).contains(v) || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v)
            || (0x1B000...0x1B2FF).contains(v) || (0x1F200...0x1F2FF).contains(v)
            || (0x20000...0x2FFFD).contains(v) || (0x30000...0x3FFFD).contains(v) {
            return true
        }
        return u.properties.isEmojiPresentation
    }

    /// True when every byte is printable ASCII: one cell per byte, nothing to escape.
    @inlinable
    public static func isPlainASCII(_ s: String) -> Bool {
        if let plain = s.utf8.withContiguousStorageIfAvailable({ bytes in bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }) { return plain }
        return s.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// A cell's text cut to `width` and its width, in one pass for plain ASCII (the common case).
    public static func fitted(_ s: String, width: Int) -> (text: String, width: Int) {
        if s.utf8.count <= width, isPlainASCII(s) { return (s, s.utf8.count) }
        let t = fit(s, width: width)
        return (t, Self.width(of: t))
    }

    /// The cells a whole text takes once escaped (O(n); see ``fit(_:width:)`` for bounded cost).
    public static func width(of s: String) -> Int {
        if isPlainASCII(s) { return s.utf8.count }
        var total = 0
        forEachCell(s, limit: Int.max) { _, w in total += w; return true }
        return total
    }

    /// Calls `body` with each displayed grapheme of `s` (escapes split into their characters) and
    /// its width, in order, until `body` returns false or `limit` graphemes of input were read.
    /// This is the one walk every other function here is built on.
    public static func forEachCell(_ s: String, limit: Int, _ body: (Character, Int) -> Bool) {
        var read = 0
        // True where a combining mark would have nothing to sit on in the shown text: at the
        // start, and after an escape (it would join the escape's last character). Such a mark
        // is shown escaped, as ``escaped(_:)`` shows it.
        var needsBase = true
        for ch in s {
            if read >= limit { return }
            read += 1
            let scalars = ch.unicodeScalars
            let first = scalars.first!
            // Fast path: a plain character.
            if scalars.count == 1 && !needsEscape(first) && !(needsBase && isCombining(first)) {
                needsBase = false
                if !body(ch, first.value < 0x1100 ? 1 : (isWide(first) ? 2 : 1)) { return }
                continue
            }
            if !scalars.contains(where: needsEscape) && !(needsBase && isCombining(first)) {
                needsBase = false
                if !body(ch, width(of: ch)) { return }
                continue
            }
            // Escape the scalars that need it; the rest keep their grapheme (a base and its marks).
            var pending = String.UnicodeScalarView()
            func flush() -> Bool {
                guard !pending.isEmpty else { return true }
                for g in String(pending) { if !body(g, width(of: g)) { return false } }
                pending = String.UnicodeScalarView()
                return true
            }
            for u in scalars {
                if needsEscape(u) || (needsBase && pending.isEmpty && isCombining(u)) {
                    if !flush() { return }
                    for e in escape(u) { if !body(e, 1) { return } }
                    needsBase = true
                } else {
                    pending.append(u)
                    needsBase = false
                }
            }
            if !flush() { return }
        }
    }

    /// The text as shown in at most `width` cells: escaped, cut with `…` when it does not fit.
    /// Reads no more of `s` than the width needs.
    public static func fit(_ s: String, width: Int) -> String {
        guard width > 0 else { return "" }
        if s.utf8.count <= width, isPlainASCII(s) { return s }
        var out = ""
        var used = 0
        var cut = false
        // `keep` is what fits in width - 1 cells, the text before the `…` if it turns out cut.
        var keep = ""
        forEachCell(s, limit: Int.max) { ch, w in
            if used + w > width { cut = true; return false }
            if used + w <= width - 1 { keep.append(ch) }
            out.append(ch)
            used += w
            return true
        }
        return cut ? keep + "…" : out
    }

    /// The text as shown in rows of at most `width` cells, at most `maxRows` of them (the last
    /// ending in `…` when the text goes on). Reads no more of `s` than the rows need. With
    /// `atWords`, a row ends after its last space when that space is in the row's second half
    /// (a word is not cut where it can be kept whole); no character is dropped either way.
    public static func wrap(_ s: String, width: Int, maxRows: Int, atWords: Bool = false) -> [String] {
        guard width > 1, maxRows > 0 else { return [] }
        if s.utf8.count <= width, isPlainASCII(s) { return [s] }
        var rows: [String] = []
        var row: [(ch: Character, w: Int)] = [], used = 0, cut = false
        forEachCell(s, limit: Int.max) { ch, w in
            if used + w > width {
                if rows.count == maxRows - 1 { cut = true; return false }
                if atWords, let space = row.lastIndex(where: { $0.ch == " " }), space >= row.count / 2, space < row.count - 1 {
                    rows.append(String(row[...space].map(\.ch)))
                    row = Array(row[(space + 1)...])
                    used = row.reduce(0) { $0 + $1.w }
                } else {
                    rows.append(String(row.map(\.ch)))
                    row = []
                    used = 0
                }
            }
            row.append((ch, w))
            used += w
            return true
        }
        var last = String(row.map(\.ch))
        if cut { last = fit(last, width: width - 1) + "…" }
        rows.append(last)
        return rows
    }

    /// The text shown in exactly `width` cells: fitted, then padded with spaces.
    public static func pad(_ s: String, to width: Int) -> String {
        let t = fit(s, width: width)
        let w = Self.width(of: t)
        return w >= width ? t : t + String(repeating: " ", count: width - w)
    }

    /// The text right-aligned in exactly `width` cells.
    public static func padLeft(_ s: String, to width: Int) -> String {
        let t = fit(s, width: width)
        let w = Self.width(of: t)
        return w >= width ? t : String(repeating: " ", count: width - w) + t
    }

    /// The last cells of a text that fit in `width`, with `…` in front when cut (breadcrumbs keep
    /// the current place in view). Costs the length of the text.
    public static func fitFromEnd(_ s: String, width: Int) -> String {
        guard width > 0 else { return "" }
        var cells: [(Character, Int)] = []
        forEachCell(s, limit: Int.max) { ch, w in cells.append((ch, w)); return true }
        let total = cells.reduce(0) { $0 + $1.1 }
        if total <= width { return String(cells.map(\.0)) }
        var out: [Character] = []
        var used = 1   // the …
        for (ch, w) in cells.reversed() {
            if used + w > width { break }
            out.append(ch)
            used += w
        }
        return "…" + String(out.reversed())
    }
}
