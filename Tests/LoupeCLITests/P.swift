import XCTest
final class PLoupeCLITests: XCTestCase { func testNothing() {} }
