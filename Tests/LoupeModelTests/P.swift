import XCTest
final class PLoupeModelTests: XCTestCase { func testNothing() {} }
