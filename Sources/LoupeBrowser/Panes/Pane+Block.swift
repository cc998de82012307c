import TerminalKit

extension Theme {
    /// A pane's border and title, brighter when the pane has the focus.
    func paneBlock(_ title: String, focused: Bool) -> Block {
        Block(title: title, style: focused ? focusedBorder : border, titleStyle: focused ? header : Style(bold: true))
    }

    /// A popup's border and title (help, picker, dialogs).
    func popupBlock(_ title: String) -> Block {
        Block(title: title, style: focusedBorder, titleStyle: header)
    }
}
