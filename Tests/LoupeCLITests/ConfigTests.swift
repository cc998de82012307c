import Foundation
import LoupeTestSupport
import XCTest

/// The config file (`$XDG_CONFIG_HOME/loupe/config.toml`, here named by `LOUPE_CONFIG`): key
/// bindings, the default memory budget, history and colour take effect; every mistake is one
/// line naming the file and the line, exit 78, and nothing runs.
final class ConfigTests: XCTestCase {
    private func config(_ text: String) throws -> String {
        let path = try Shared.temporaryPath("config.toml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func play(_ keys: String, config: String, _ extra: [String] = []) throws -> LoupeBinary.Run {
        let script = try Shared.temporaryPath("keys.play")
        try keys.write(toFile: script, atomically: true, encoding: .utf8)
        let sample = Shared.checkout.appendingPathComponent("sample-data/library.sqlite").path
        return try LoupeBinary.run([sample, "--play", script, "--size", "100x30"] + extra, environment: ["LOUPE_CONFIG": config])
    }

    func testMistakesAreOneLineWithTheirLine() throws {
        let cases: [(text: String, line: Int, says: String)] = [
            ("[keys]\nquit-view = \"q\"\nmove-donw = \"x\"\n", 3, "did you mean 'move-down'"),
            ("[keys]\nquit-view = \"Ctrl-?\"\n", 2, "names no key"),
            ("[keys]\nquit-view = 5\n", 2, "a key or a list of keys"),
            ("# settings\n[defaults]\nhistory = \n", 3, "expected value"),
            ("[defaults]\nhistory = 10\nmemory-budget = \"lots\"\n", 3, "memory-budget takes a size"),
            ("[defaults]\ncolour = \"yes\"\n", 2, "true or false"),
            ("[defaults]\nhistroy = 10\n", 2, "no setting is named 'histroy'"),
            ("[colours]\ntheme = 1\n", 1, "no section is named [colours]"),
            ("[keys]\nshow-help = \"W\"\nquit-view = \"W\"\n", 3, "is given to both show-help (line 2) and quit-view"),
        ]
        let store = Shared.checkout.appendingPathComponent("sample-data/library.sqlite").path
        for c in cases {
            let path = try config(c.text)
            let run = try LoupeBinary.run(["types", store], environment: ["LOUPE_CONFIG": path])
            XCTAssertEqual(run.status, 78, "\(c.text.debugDescription): \(run)")
            XCTAssertEqual(run.stdout, "", "nothing runs")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
            XCTAssertTrue(run.stderr.contains("\(path):\(c.line): ") && run.stderr.contains(c.says), "\(c.text.debugDescription): \(run.stderr)")
        }
    }

    func testBindingsBudgetAndTheAbsentFile() throws {
        let path = try config("[keys]\nshow-help = \"W\"\nquit-view = [\"q\", \"Ctrl-Q\"]\n\n[defaults]\nmemory-budget = \"1K\"\nhistory = 50\ncolour = false\n")
        let help = try play("W\n", config: path)
        XCTAssertEqual(help.status, 0, help.description)
        XCTAssertTrue(help.stdout.contains("q Ctrl-Q") && help.stdout.contains("quit-view"), "W shows help, listing the new keys: \(help.stdout)")
        let question = try play("?\n", config: path)
        XCTAssertFalse(question.stdout.contains("quit-view"), "? no longer shows help")
        let moved = try play("j\n", config: path)
        XCTAssertTrue(moved.stdout.contains("W help"), "the status line names the key that shows help: \(moved.stdout)")
        XCTAssertTrue(moved.stdout.contains("paged · a whole load"), "the config's memory budget (1K) puts the sample in paged mode")
        let explicit = try play("j\n", config: path, ["--memory-budget", "2G"])
        XCTAssertFalse(explicit.stdout.contains("paged"), "--memory-budget wins over the config file")
        let none = try play("?\n", config: "/nonexistent/config.toml")
        XCTAssertEqual(none.status, 0)
        XCTAssertTrue(none.stdout.contains("quit-view"), "without a file, ? shows help")
    }
}
