import Synchronization
import TerminalKit

/// The browser's colours, or none at all when `NO_COLOR` is set (attributes only).
public struct Theme: Sendable {
    public var header: Style
    public var selection: Style
    public var selectionUnfocused: Style
    public var border: Style
    public var focusedBorder: Style
    public var dim: Style
    public var null: Style
    public var number: Style
    public var string: Style
    public var date: Style
    public var keyword: Style
    public var error: Style
    public var status: Style
    public var relation: Style
    public var pending: Style
    /// A cell changed by a pending edit.
    public var pendingChanged: Style
    /// A row added by a pending insert.
    public var pendingAdded: Style
    /// A row marked for deletion.
    public var pendingDeleted: Style
    /// A row or cell another process's last commit added or changed (live mode).
    public var live: Style = Style(foreground: .black, background: .green)
    /// A row another process's last commit deleted, shown where it was until the next key.
    public var liveDeleted: Style = Style(foreground: .red, dim: true)
    /// A cell holding what the last search (`/`) looked for.
    public var match: Style = Style(foreground: .black, background: .magenta)

    /// Colours that read well on 8- and 256-colour terminals (only the 8 ANSI colours are used).
    public static let color = Theme(
        header: Style(foreground: .cyan, bold: true), selection: Style(foreground: .black, background: .cyan),
        selectionUnfocused: Style(reverse: true), border: Style(foreground: .brightBlack), focusedBorder: Style(foreground: .cyan),
        dim: Style(foreground: .brightBlack), null: Style(foreground: .brightBlack), number: Style(foreground: .magenta),
        string: Style(), date: Style(foreground: .yellow), keyword: Style(foreground: .blue, bold: true),
        error: Style(foreground: .red, bold: true), status: Style(foreground: .black, background: .white),
        relation: Style(foreground: .green), pending: Style(foreground: .yellow, bold: true),
        pendingChanged: Style(foreground: .black, background: .yellow), pendingAdded: Style(foreground: .green, bold: true),
        pendingDeleted: Style(foreground: .red, dim: true))

    /// `NO_COLOR`: bold, reverse and dim only.
    public static let monochrome = Theme(
        header: Style(bold: true), selection: Style(reverse: true), selectionUnfocused: Style(underline: true),
        border: Style(), focusedBorder: Style(bold: true), dim: Style(dim: true), null: Style(dim: true), number: Style(),
        string: Style(), date: Style(), keyword: Style(bold: true), error: Style(bold: true), status: Style(reverse: true),
        relation: Style(underline: true), pending: Style(bold: true),
        pendingChanged: Style(bold: true, underline: true), pendingAdded: Style(bold: true), pendingDeleted: Style(dim: true), live: Style(reverse: true),
        liveDeleted: Style(dim: true), match: Style(bold: true, underline: true))

    /// False when the config file asks for no colour (`colour = false`); `NO_COLOR` wins either way.
    public static let coloured = Mutex(true)

    /// The theme the environment (and the config file) ask for.
    public static func fromEnvironment(_ environment: [String: String]) -> Theme {
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .monochrome }
        return coloured.withLock { $0 } ? .color : .monochrome
    }
}
