import XCTest
final class PLoupeStoreTests: XCTestCase { func testNothing() {} }
