import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import TerminalKit

/// How values and statements look on screen: a cell's text and style, a statement's syntax.
extension Browser {
    /// The widest a cell's text is ever made (columns are narrower; the full-value view shows more).
    static let cellTextLimit = 200

    /// A cell's text, at most `width` cells: dates, nulls, arrays and nested objects summarised;
    /// escaped by ``DisplayText``. Its cost depends on `width`, never on the value's size.
    func cellText(_ v: Value, width: Int = Browser.cellTextLimit) -> String {
        switch v {
        case .null: return "∅"
        case .date(let d):
            let iso = DateText.iso(d)
            return iso.hasSuffix("T00:00:00Z") ? String(iso.prefix(10)) : iso.replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: "")
        case .array(let items):
            var text = "[\(items.count)] "
            for (i, item) in items.prefix(4).enumerated() {
                if i > 0 { text += ", " }
                text += cellText(item, width: max(1, width - DisplayText.width(of: text)))
                if DisplayText.width(of: text) >= width { break }
            }
            return DisplayText.fit(text + (items.count > 4 ? ", …" : ""), width: width)
        case .object(let o):
            var text = "{"
            for (i, m) in o.members.prefix(3).enumerated() {
                if i > 0 { text += ", " }
                text += DisplayText.fit(m.key, width: 40) + ": " + cellText(m.value, width: max(1, width - DisplayText.width(of: text)))
                if DisplayText.width(of: text) >= width { break }
            }
            return DisplayText.fit(text + (o.members.count > 3 ? ", …}" : "}"), width: width)
        case .data(let d): return "<\(d.count) bytes>"
        case .string(let s): return DisplayText.fit(ValueFormatter.shownPrefix(s, width: width), width: width)
        default: return DisplayText.fit(ValueFormatter.plain(v), width: width)
        }
    }

    func cellStyle(_ v: Value) -> Style {
        switch v {
        case .null: return theme.null
        case .int, .double: return theme.number
        case .date: return theme.date
        case .bool: return theme.keyword
        default: return theme.string
        }
    }


    /// True when a pending edit changed one of the row's cells or relations.
    func isChangedRow(_ ref: ObjectRef, _ changes: ChangeSet) -> Bool {
        guard let graph else { return false }
        let table = graph.table(ref)
        return table.attributes.contains { changes.isChanged(ref, attribute: $0.name) }
            || table.relations.contains { changes.isRelinked(ref, relation: $0.name) }
    }


    /// Styles for each character of a statement, from its tokens: keywords, strings, numbers,
    /// operators; everything red after a lexing error.
    func highlight(_ text: String) -> [Style] {
        let count = text.count
        var styles = Array(repeating: Style.plain, count: count)
        if text.hasPrefix(".") { for i in 0..<count { styles[i] = theme.keyword }; return styles }
        // Token ranges are in Unicode scalars; map them to characters.
        var characterOfScalar: [Int] = []
        for (i, ch) in text.enumerated() { for _ in ch.unicodeScalars { characterOfScalar.append(i) } }
        characterOfScalar.append(count)
        func paint(_ range: SourceRange, _ style: Style) {
            let a = characterOfScalar[min(range.start, characterOfScalar.count - 1)]
            let b = characterOfScalar[min(range.end, characterOfScalar.count - 1)]
            for i in a..<max(a, b) where i < count { styles[i] = style }
        }
        var lexer = Lexer(text)
        while true {
            do {
                let token = try lexer.next()
                switch token.kind {
                case .end: return styles
                case .identifier(let w): if Keywords.contains(w) { paint(token.range, theme.keyword) }
                case .at: paint(token.range, theme.keyword)
                case .string, .date: paint(token.range, theme.date)
                case .integer, .decimal, .reference: paint(token.range, theme.number)
                case .symbol, .modifier: paint(token.range, theme.relation)
                case .quotedIdentifier, .variable: break
                }
            } catch let error as QueryError {
                paint(SourceRange(error.range.start, text.unicodeScalars.count), theme.error)
                return styles
            } catch { return styles }
        }
    }
}
