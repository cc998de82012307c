import DisplayText
import Foundation
import LoupeModel
import LoupeQuery
import TerminalKit

/// One screen: the widgets the browser's state makes, in drawing order (later ones over
/// earlier ones).
struct Frame {
    var widgets: [(area: Rect, widget: any Widget)] = []
    /// True when the cursor shows in the REPL's input (it has the focus and nothing is over it).
    var showsCursor = false

    /// Draws every widget; returns where the cursor goes (the last text field's: the REPL's input,
    /// or the form over it), if anywhere.
    func draw(into buffer: inout Buffer) -> (x: Int, y: Int)? {
        var cursor: (x: Int, y: Int)?
        for (area, widget) in widgets {
            if let field = widget as? any CursorWidget { cursor = field.draw(area, &buffer) } else { widget.render(area, &buffer) }
        }
        return showsCursor ? cursor : nil
    }
}

extension Browser {
    /// Draws the whole screen into `buffer`; returns where the cursor goes (in the REPL input),
    /// if anywhere. What the store must give first is read (``prepareFrame(_:)``), then the
    /// frame is made from the state (``makeFrame(_:)``: where each pane goes, what scrolls into
    /// view) and drawn; neither of those reads the store.
    @discardableResult
    public func render(into buffer: inout Buffer) -> (x: Int, y: Int)? {
        guard buffer.width >= 20, buffer.height >= 8 else {
            buffer.put("Loupe: the window is too small", x: 0, y: 0, maxWidth: buffer.width)
            return nil
        }
        prepareFrame(buffer.area)
        return makeFrame(buffer.area).draw(into: &buffer)
    }

    /// Reads what the next frame on a screen of `screen`'s size shows that the store holds and
    /// memory does not (paged mode): the window of rows under the records pane, and the link
    /// totals of the selected object when its window holds only its first links.
    func prepareFrame(_ screen: Rect) {
        layout = screenLayout(screen)
        guard pages != nil else { return }
        if var sheet = current {
            let body = max(1, layout.records.height - 3)
            sheet.clamp(height: body)
            stack[stack.count - 1] = sheet
            ensurePagedWindow(span: body)
        }
        if let ref = selectedObject { _ = pagedLinkTotals(of: ref) }
    }

    /// The frame for a screen of `screen`'s size: each pane's widget, made from the state (and
    /// what ``prepareFrame(_:)`` read), with the scroll positions the frame needs kept in the
    /// state. It never reads the store: a read asked for meanwhile is refused and counted
    /// (``storeReadsAskedWhileDrawing``).
    func makeFrame(_ screen: Rect) -> Frame {
        layout = screenLayout(screen)
        isMakingFrame = true
        defer { isMakingFrame = false }
        var frame = Frame()
        frame.widgets.append((Rect(x: 0, y: 0, width: screen.width, height: 1), breadcrumb))
        let main = Rect(x: layout.records.x, y: layout.records.y, width: layout.records.width + layout.detail.width, height: layout.records.height)
        if main.height >= 3 {
            if layout.types.width > 0 { frame.widgets.append((layout.types, typesPane(layout.types))) }
            if showsGraph, graph != nil {
                if let pane = graphPane() { frame.widgets.append((main, pane)) }
            } else {
                if layout.records.width > 0 { frame.widgets.append((layout.records, recordsPane(layout.records))) }
                if layout.detail.width > 0 { frame.widgets.append((layout.detail, detailPane(layout.detail))) }
            }
        }
        frame.widgets.append((layout.repl, replPane))
        frame.widgets.append((Rect(x: 0, y: screen.height - 1, width: screen.width, height: 1), statusLine))
        if showsHelp {
            helpTop = HelpPopup.top(helpTop, lines: KeyMap.helpLines, in: screen)
            frame.widgets.append((screen, HelpPopup(lines: KeyMap.helpLines, top: helpTop, theme: theme)))
        }
        if let form = formPopup { frame.widgets.append((screen, form)) }
        if let pane = pickerPopup(screen) { frame.widgets.append((screen, pane)) }
        if let dialog { frame.widgets.append((screen, DialogPopup(dialog: dialog, theme: theme))) }
        frame.showsCursor = (focus == .repl || form != nil) && picker == nil && dialog == nil
        return frame
    }

    /// Where each pane goes on `screen`: the REPL below the others (taller on tall screens), the
    /// types pane as wide as its longest name and count (a sixth to a third of the screen), the
    /// detail pane three tenths; below 100 columns the focused pane and its neighbour only; `z`
    /// gives the focused pane the screen.
    func screenLayout(_ screen: Rect) -> Layout {
        let w = screen.width, h = screen.height
        // Room for a caret error (five lines) when the screen allows.
        var replHeight = h >= 30 ? 9 : h >= 24 ? 7 : 4
        let typesNatural = typeCountRows.map { DisplayText.width(of: DisplayText.fit($0.name, width: 40)) + $0.shown.count + 3 }.max() ?? 16
        var typesWidth = w >= 100 ? min(28, max(16, w / 6, min(typesNatural, w / 4))) : w >= 60 ? min(max(16, typesNatural), w / 3) : 0
        var detailWidth = w >= 100 ? max(30, w * 3 / 10) : w >= 60 ? max(26, w * 2 / 5) : 0
        if w < 100, w >= 60 {
            // Two panes side by side below 100 columns: the focused one and its neighbour, so that
            // the records keep room (at 80×24: types + records, or records + detail).
            if focus == .detail { typesWidth = 0 } else { detailWidth = 0 }
        }
        if zoomed {
            // `z`: the focused pane alone (the REPL with its whole height for scrollback).
            switch focus {
            case .repl: replHeight = h - 2
            case .types: detailWidth = 0; typesWidth = w
            case .records: typesWidth = 0; detailWidth = 0
            case .detail: typesWidth = 0; detailWidth = w
            }
            if focus != .repl { replHeight = min(replHeight, 4) }
        }
        let mainTop = 1, mainBottom = h - 1 - replHeight
        let recordsWidth = max(0, w - typesWidth - detailWidth)
        var layout = Layout()
        layout.types = Rect(x: 0, y: mainTop, width: typesWidth, height: mainBottom - mainTop)
        layout.records = Rect(x: typesWidth, y: mainTop, width: recordsWidth, height: mainBottom - mainTop)
        layout.detail = Rect(x: typesWidth + recordsWidth, y: mainTop, width: detailWidth, height: mainBottom - mainTop)
        layout.repl = Rect(x: 0, y: mainBottom, width: w, height: replHeight)
        layout.typesBody = Block.inner(layout.types)
        layout.recordsBody = RecordsPane.body(of: layout.records)
        layout.detailBody = Block.inner(layout.detail)
        layout.pickerBody = PickerPopup.area(in: screen).body
        return layout
    }
}
