import Foundation
import OrchardTestSupport
import Testing

/// The client SDK declares iOS 15 (Package.swift), but a Linux build checks no Apple availability. These tests
/// read the sources of the modules an app links (OrchardPay and what it imports) and refuse what iOS 15 lacks.
@Suite("OrchardPay: iOS 15 availability")
struct AvailabilityTests {
    /// The modules an app links with OrchardPay.
    static let clientModules = ["OrchardPay", "ApplePayModel", "OrchardBase", "OrchardJSON"]

    /// Standard-library and Foundation API that needs iOS 16 or later.
    static let newerThanIOS15 = [
        "Duration", "ContinuousClock", "SuspendingClock", "Task.sleep(for:", ".sleep(for:", ".sleep(until:",
        "Regex", "#/", "wholeMatch(", "firstMatch(of:", "firstRange(of:", ".replacing(", ".ranges(of:",
        "trimmingPrefix(", "URL(filePath:", ".appending(path:", ".appending(component", "Mutex<", "Atomic<",
        "Synchronization", "URL.documentsDirectory", "Locale.Language",
    ]

    /// The Swift sources of `module`, with their text (comments removed).
    static func sources(_ module: String) throws -> [(name: String, code: String)] {
        let directory = TestPaths.packageRoot.appendingPathComponent("Sources/\(module)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
        return try names.sorted().map { name in
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line)
            }.joined(separator: "\n")
            return ("\(module)/\(name)", code)
        }
    }

    @Test("no iOS 16 API in the modules an app links (the platform floor is iOS 15)")
    func noNewerAPI() throws {
        var found: [String] = []
        for module in Self.clientModules {
            for (name, code) in try Self.sources(module) {
                for symbol in Self.newerThanIOS15 where code.contains(symbol) { found.append("\(name): \(symbol)") }
            }
        }
        #expect(found == [])
    }
}
