/// A key the user pressed.
public enum Key: Hashable, Sendable {
    case character(Character)
    /// Control plus a letter: `.control("a")` is Ctrl-A.
    case control(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, backspace, delete, tab, backTab, escape
    case function(Int)
}

/// A mouse action.
public struct MouseEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable { case press, wheelUp, wheelDown }
    public var kind: Kind
    public var x: Int
    public var y: Int
    public init(kind: Kind, x: Int, y: Int) {
        self.kind = kind
        self.x = x
        self.y = y
    }
}

/// Something that happened at the terminal.
public enum Event: Hashable, Sendable {
    case key(Key)
    case mouse(MouseEvent)
    case resize(width: Int, height: Int)
}

/// A type that shows cells on a real (or pretend) terminal and reads its input.
public protocol Backend: AnyObject {
    /// The screen size in cells.
    var size: (width: Int, height: Int) { get }
    /// Shows the given cells (the others keep what they had), then the cursor, or hides it.
    func draw(_ changes: [(x: Int, y: Int, cell: Cell)], cursor: (x: Int, y: Int)?)
    /// The next event, waiting at most `timeout` milliseconds (nil when none came).
    func nextEvent(timeout: Int) -> Event?
    /// Puts `text` on the clipboard of the terminal the user sits at.
    func copyToClipboard(_ text: String)
    /// Gives the terminal back to its normal mode while `body` runs (an editor), then takes it
    /// again; the next frame is drawn whole.
    func suspend(_ body: () -> Void)
}

/// A backend in memory: what tests draw into and read from.
public final class TestBackend: Backend {
    public private(set) var buffer: Buffer
    public private(set) var cursor: (x: Int, y: Int)?
    public var events: [Event] = []
    /// What was put on the clipboard, oldest first.
    public private(set) var clipboard: [String] = []
    /// How many times the terminal was lent (``suspend(_:)``).
    public private(set) var suspensions = 0

    public init(width: Int, height: Int) { buffer = Buffer(width: width, height: height) }

    public var size: (width: Int, height: Int) { (buffer.width, buffer.height) }

    public func resize(width: Int, height: Int) { buffer = Buffer(width: width, height: height) }

    public func draw(_ changes: [(x: Int, y: Int, cell: Cell)], cursor: (x: Int, y: Int)?) {
        for c in changes { buffer[c.x, c.y] = c.cell }
        self.cursor = cursor
    }

    public func nextEvent(timeout: Int) -> Event? { events.isEmpty ? nil : events.removeFirst() }

    public func copyToClipboard(_ text: String) { clipboard.append(text) }

    public func suspend(_ body: () -> Void) { suspensions += 1; body() }
}

/// Draws frames on a backend, sending only what changed since the previous frame.
public final class Terminal {
    public let backend: Backend
    private var previous: Buffer?

    public init(backend: Backend) { self.backend = backend }

    /// Draws one frame: `render` fills a buffer the size of the screen and says where the cursor goes.
    public func draw(_ render: (inout Buffer) -> (x: Int, y: Int)?) {
        let (w, h) = backend.size
        var buffer = Buffer(width: w, height: h)
        let cursor = render(&buffer)
        backend.draw(buffer.changes(since: previous), cursor: cursor)
        previous = buffer
    }

    /// Forgets the last frame, so the next one is drawn whole (after a resize or a redraw request).
    public func invalidate() { previous = nil }
}
