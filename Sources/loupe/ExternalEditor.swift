import Foundation
import LoupeBrowser

/// `E` in the browser: a value edited in the user's editor (`$VISUAL`, else `$EDITOR`, else
/// `vi`), in a temporary file of its own that is removed after.
enum ExternalEditor {
    /// What the editor saved (the trailing newline editors add taken off again when the value
    /// had none); nil when it could not run, exited with an error, or the file went away.
    static func edit(_ edit: ExternalEdit, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let command = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? "vi"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-edit-\(UUID().uuidString)")
        let name = edit.title.map { $0.isLetter || $0.isNumber || $0 == "." ? $0 : "_" }
        let file = directory.appendingPathComponent(String(name.prefix(60)) + ".txt")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try Data(edit.text.utf8).write(to: file)
        } catch { return nil }
        defer { try? FileManager.default.removeItem(at: directory) }
        // The command as the shell reads it (`code --wait`, `emacs -nw`), the file its argument.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command + " \"$1\"", "sh", file.path]
        do { try process.run() } catch { return nil }
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: file.path),
              var text = String(data: data, encoding: .utf8) else { return nil }
        if !edit.text.hasSuffix("\n"), text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
