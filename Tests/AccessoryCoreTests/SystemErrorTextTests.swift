import Foundation
import Testing

@testable import AccessoryCore

@Suite("System error text")
struct SystemErrorTextTests {
    @Test func aCodeIsTheCLibrarysTextInLowerCase() {
        #expect(SystemErrorText.reason(ENOENT) == "no such file or directory")
        #expect(SystemErrorText.reason(EACCES) == "permission denied")
    }

    @Test func aFileSystemErrorIsTheReasonUnderneath() {
        do {
            _ = try Data(contentsOf: URL(fileURLWithPath: "/nonexistent/file"))
            Issue.record("read a missing file")
        } catch {
            #expect(SystemErrorText.reason(of: error) == "no such file or directory")
        }
        #expect(SystemErrorText.reason(of: POSIXError(.EISDIR)) == "is a directory")
    }

    @Test func anyOtherErrorIsItsOwnDescription() {
        struct Odd: Error, CustomStringConvertible { var description: String { "odd" } }
        #expect(SystemErrorText.reason(of: Odd()) == "odd")
    }

    @Test func whiteSpaceIsTrimmedAtBothEndsOnly() {
        #expect(" \t name  with  gaps \r\n".trimmingWhitespace() == "name  with  gaps")
        #expect("   ".trimmingWhitespace() == "")
        #expect("x".trimmingWhitespace() == "x")
        #expect(Substring("  a ").trimmingWhitespace() == "a")
    }
}
