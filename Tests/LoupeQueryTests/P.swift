import XCTest
final class PLoupeQueryTests: XCTestCase { func testNothing() {} }
