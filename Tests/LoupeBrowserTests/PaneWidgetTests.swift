import DisplayText
@testable import LoupeBrowser
import TerminalKit
import XCTest

/// Panes as widgets: each drawn from a value, without a browser or a store, into a buffer.
final class PaneWidgetTests: XCTestCase {
    func render(_ widget: some Widget, width: Int, height: Int) -> Buffer {
        var buffer = Buffer(width: width, height: height)
        widget.render(buffer.area, &buffer)
        return buffer
    }

    /// A narrow status line leaves whole parts out, least useful first; parts kept at 6 or more
    /// stay whatever the width; a message gets half the line.
    func testTheStatusLineDropsTheLeastUsefulPartsWhole() {
        let parts = [StatusLine.Part(text: "library.sqlite", keep: 3), .init(text: "Persist", keep: 0), .init(text: "7 types", keep: 1),
                     .init(text: "3000 objects", keep: 2), .init(text: "row 1/750", keep: 6), .init(text: "pending +1 ~0 -0", keep: 8)]
        func line(_ width: Int, message: String? = nil) -> String {
            render(StatusLine(parts: parts, hint: "(Ctrl-S commits, U undoes)", right: message ?? "? help  q quit ", isMessage: message != nil, theme: .monochrome),
                   width: width, height: 1).lines[0]
        }
        XCTAssertEqual(line(140), " library.sqlite · Persist · 7 types · 3000 objects · row 1/750 · pending +1 ~0 -0 (Ctrl-S commits, U undoes)                 ? help  q quit")
        XCTAssertEqual(line(120), " library.sqlite · Persist · 7 types · 3000 objects · row 1/750 · pending +1 ~0 -0                        ? help  q quit")
        XCTAssertEqual(line(80), " library.sqlite · 3000 objects · row 1/750 · pending +1 ~0 -0    ? help  q quit")
        XCTAssertEqual(line(60), " row 1/750 · pending +1 ~0 -0                ? help  q quit")
        XCTAssertEqual(line(30), " row 1/750 · pending +1 ~0 -0")
        // A message is shown whole when it fits in half the line.
        XCTAssertEqual(line(80, message: "committed 1 change"), " library.sqlite · row 1/750 · pending +1 ~0 -0                committed 1 change")
    }

    /// The types pane scrolls by its `top`, highlights its selection only while one is given, and
    /// shows counts right-aligned against the border.
    func testTheTypesPaneShowsRowsFromItsTop() {
        let rows = (1...6).map { TypesPane.Row(name: "Type\($0)", count: String($0 * 10)) }
        let theme = Theme.color
        let buffer = render(TypesPane(rows: rows, selection: 3, top: 2, focused: true, theme: theme), width: 16, height: 5)
        XCTAssertEqual(buffer.lines, ["┌ Types ───────┐", "│Type3       30│", "│Type4       40│", "│Type5       50│", "└──────────────┘"])
        XCTAssertEqual(buffer[1, 2].style, theme.selection, "the selected row (Type4) is highlighted")
        XCTAssertEqual(buffer[1, 1].style, .plain)
        let loading = render(TypesPane(rows: rows, selection: nil, top: 0, focused: true, theme: theme), width: 16, height: 5)
        XCTAssertFalse((1..<4).contains { loading[1, $0].style == theme.selection }, "nothing selected while loading")
    }

    /// A table's cells are drawn where its columns are, its markers and `<` `>` where it says.
    func testTheRecordsPaneDrawsTheTableItIsGiven() {
        typealias T = RecordsPane.Table
        let table = T(columns: [T.Column(header: "id", width: 3, isCurrent: false), T.Column(header: "title", width: 6, isCurrent: true)],
                      markerWidth: 2, moreLeftX: nil, moreRight: true,
                      rows: [T.Row(selected: false, marker: ("+", Theme.monochrome.pendingAdded), cells: [T.Cell(text: "  1", style: .plain), T.Cell(text: "Dune  ", style: .plain)]),
                             T.Row(selected: true, marker: nil, cells: [T.Cell(text: "  2", style: .plain), T.Cell(text: "Emma  ", style: .plain)])],
                      isEmpty: false)
        let buffer = render(RecordsPane(title: "Book (2)", content: .table(table), focused: true, theme: .monochrome), width: 16, height: 5)
        XCTAssertEqual(buffer.lines, ["┌ Book (2) ────┐", "│  id  title  >│", "│+   1 Dune    │", "│    2 Emma    │", "└──────────────┘"])
        let loading = render(RecordsPane(title: "Records", content: .loading((done: 5, total: 10)), focused: false, theme: .monochrome), width: 40, height: 6)
        XCTAssertEqual(loading.lines[2], "│ Loading 5 of 10 objects…             │")
    }
}
