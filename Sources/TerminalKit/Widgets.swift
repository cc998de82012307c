/// Box-drawing characters for borders.
public enum Border {
    public static let horizontal = "─", vertical = "│"
    public static let topLeft = "┌", topRight = "┐", bottomLeft = "└", bottomRight = "┘"
}

/// A horizontal bar showing a fraction, `[#####     ] 50%`.
public func progressBar(_ fraction: Double, width: Int) -> String {
    let inner = max(0, width - 7)
    let f = min(1, max(0, fraction))
    let filled = Int((Double(inner) * f).rounded())
    return "[" + String(repeating: "█", count: filled) + String(repeating: "·", count: inner - filled) + "] "
        + String(Int((f * 100).rounded())).leftPadded(3) + "%"
}

extension String {
    /// Right-aligned in `width` characters.
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

extension Buffer {
    /// The buffer as an SVG picture (monospace text, colours and bold kept), for screenshots.
    public func svg(cellWidth: Double = 8.4, cellHeight: Double = 17) -> String {
        let palette = ["#1e1e1e", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
                       "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"]
        func hex(_ c: Color, _ fallback: String) -> String {
            guard let i = c.index else { return fallback }
            if i < 16 { return palette[i] }
            func byte(_ v: Int) -> String { let h = String(v, radix: 16); return h.count == 1 ? "0" + h : h }
            if i >= 232 { let g = 8 + (i - 232) * 10; return "#" + byte(g) + byte(g) + byte(g) }
            let n = i - 16, steps = [0, 95, 135, 175, 215, 255]
            return "#" + byte(steps[n / 36]) + byte(steps[n / 6 % 6]) + byte(steps[n % 6])
        }
        func escape(_ s: String) -> String {
            var out = ""
            for ch in s {
                switch ch {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                default: out.append(ch)
                }
            }
            return out
        }
        let w = Double(width) * cellWidth, h = Double(height) * cellHeight
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(w))\" height=\"\(Int(h))\" viewBox=\"0 0 \(Int(w)) \(Int(h))\">\n"
        out += "<rect width=\"100%\" height=\"100%\" fill=\"#1e1e1e\"/>\n"
        out += "<g font-family=\"DejaVu Sans Mono, Menlo, monospace\" font-size=\"14\" xml:space=\"preserve\">\n"
        func colors(_ cell: Cell) -> (fg: String, bg: String) {
            var fg = hex(cell.style.foreground, "#e5e5e5"), bg = hex(cell.style.background, "")
            if cell.style.reverse { let t = fg; fg = bg.isEmpty ? "#1e1e1e" : bg; bg = t }
            return (fg, bg)
        }
        for y in 0..<height {
            // Backgrounds: one rectangle per run of cells with the same colour, edges crisp.
            var x = 0
            while x < width {
                let bg = colors(self[x, y]).bg
                var end = x + 1
                while end < width, colors(self[end, y]).bg == bg { end += 1 }
                if !bg.isEmpty {
                    let px = Double(x) * cellWidth, py = Double(y) * cellHeight
                    out += "<rect x=\"\(px)\" y=\"\(py)\" width=\"\(Double(end - x) * cellWidth)\" height=\"\(cellHeight)\" fill=\"\(bg)\" shape-rendering=\"crispEdges\"/>\n"
                }
                x = end
            }
            for x in 0..<width {
                let cell = self[x, y]
                if cell.text.isEmpty || cell.text == " " { continue }
                let tx = Double(x) * cellWidth, ty = Double(y) * cellHeight + cellHeight * 0.78
                let weight = cell.style.bold ? " font-weight=\"bold\"" : ""
                out += "<text x=\"\(tx)\" y=\"\(ty)\" fill=\"\(colors(cell).fg)\"\(weight)>\(escape(cell.text))</text>\n"
            }
        }
        return out + "</g>\n</svg>\n"
    }
}
