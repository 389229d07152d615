import Foundation
import OrchardBase

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The access log file of `orchard serve --access-log PATH`: one line appended per request, in one `write` each
/// (`O_APPEND`, so lines from several threads never interleave). ``reopen()`` closes it and opens the path again,
/// which is what SIGHUP does so that logrotate can move the file away and the next line lands in a new one.
final class AccessLogFile: Sendable {
    /// The file's path.
    let path: String
    private let descriptor: Locked<Int32>

    /// Opens (creating, mode 640) `path` for appending.
    init(path: String) throws {
        self.path = path
        descriptor = Locked(try Self.open(path))
    }

    private static func open(_ path: String) throws -> Int32 {
        let descriptor = Foundation.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard descriptor >= 0 else {
            throw UsageError("cannot open the access log \(path): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    /// Appends `line` and a newline.
    func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        descriptor.withLock { descriptor in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Opens the path again (a new file when the old one was moved) and closes the old descriptor; on failure the
    /// old one is kept, so no line is lost, and the error is thrown.
    func reopen() throws {
        let fresh = try Self.open(path)
        descriptor.withLock { descriptor in
            close(descriptor)
            descriptor = fresh
        }
    }

    deinit { descriptor.withLock { _ = close($0) } }
}
