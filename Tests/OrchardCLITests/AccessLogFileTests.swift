import Foundation
import Testing

@testable import OrchardCLI

@Suite("The access log file (--access-log)")
struct AccessLogFileTests {
    @Test("lines are appended; reopen after the file is moved starts a new file, and no line is lost")
    func reopenAfterRotation() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-log-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("access.log").path
        let log = try AccessLogFile(path: path)
        log.write(#"{"n":1}"#)
        log.write(#"{"n":2}"#)
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        // Until the reopen, lines still go to the moved file (what logrotate's postrotate SIGHUP is for).
        log.write(#"{"n":3}"#)
        try log.reopen()
        log.write(#"{"n":4}"#)
        #expect(try String(contentsOfFile: path + ".1", encoding: .utf8) == "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"n\":4}\n")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode.map { $0 & 0o077 == 0o040 || $0 & 0o077 == 0 } == true, "group-readable at most")
    }

    @Test("a path that cannot be opened is a clear error naming it")
    func unopenable() {
        #expect(throws: UsageError.self) { try AccessLogFile(path: "/nonexistent-dir/access.log") }
    }
}
