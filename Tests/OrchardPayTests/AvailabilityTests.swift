import Foundation
import OrchardTestSupport
import Testing

/// The client SDK declares iOS 15 (Package.swift), but a Linux build checks no Apple availability. These tests
/// read the sources of the modules an app links (OrchardPay and what it imports) and refuse what iOS 15 lacks.
@Suite("OrchardPay: iOS 15 availability")
struct AvailabilityTests {
    /// The modules an app links with OrchardPay.
    static let clientModules = ["OrchardPay", "ApplePayModel", "OrchardBase", "OrchardJSON", "PassKitShim"]

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

    /// An OS version, `16.4` as (16, 4).
    struct Version: Comparable, CustomStringConvertible {
        var major: Int
        var minor: Int
        init?(_ text: Substring) {
            let parts = text.split(separator: ".").compactMap { Int($0) }
            guard let major = parts.first else { return nil }
            self.major = major
            self.minor = parts.count > 1 ? parts[1] : 0
        }
        static func < (a: Version, b: Version) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
        var description: String { "\(major).\(minor)" }
    }

    static let floor = Version("15.0")!

    /// The `iOS` version of an `@available(iOS …)` or `#available(iOS …)` on `line`.
    static func iOSVersion(in line: String, marker: String) -> Version? {
        guard let range = line.range(of: marker + "(iOS ") else { return nil }
        let rest = line[range.upperBound...]
        return Version(rest.prefix { $0.isNumber || $0 == "." })
    }

    /// PassKitShim's declarations newer than the floor, by name, from their `@available(iOS …)` attributes.
    static func newerPassKitNames() throws -> [String: Version] {
        var names: [String: Version] = [:]
        let declaration = try NSRegularExpression(
            pattern: #"\b(?:var|let|class|enum|struct|case|func)\s+([A-Za-z_][A-Za-z0-9_]*)"#)
        for (_, code) in try sources("PassKitShim") {
            var pending: Version?
            for line in code.split(separator: "\n").map(String.init) {
                if let version = iOSVersion(in: line, marker: "@available") {
                    pending = version
                    continue
                }
                guard let version = pending else { continue }
                let range = NSRange(line.startIndex..., in: line)
                guard let match = declaration.firstMatch(in: line, range: range),
                    let name = Range(match.range(at: 1), in: line)
                else { continue }
                pending = nil
                if version > floor { names[String(line[name])] = version }
            }
        }
        return names
    }

    /// Whether `name` is used on `line` as PassKit's: a `PK…` type, a member of a PassKit object (the adapter
    /// names them `passKit`), or an implicit member (`.instantFundsOut`).
    static func usesPassKit(_ name: String, in line: String) -> Bool {
        var searchStart = line.startIndex
        while let range = line.range(of: name, range: searchStart..<line.endIndex) {
            searchStart = range.upperBound
            let after = range.upperBound < line.endIndex ? line[range.upperBound] : " "
            guard !(after.isLetter || after.isNumber || after == "_") else { continue }
            if name.hasPrefix("PK") {
                let before = range.lowerBound > line.startIndex ? line[line.index(before: range.lowerBound)] : " "
                if !(before.isLetter || before.isNumber || before == "_") { return true }
                continue
            }
            guard range.lowerBound > line.startIndex, line[line.index(before: range.lowerBound)] == "." else {
                continue
            }
            let dot = line.index(before: range.lowerBound)
            let base = line[..<dot].reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if base.isEmpty || String(base.reversed()) == "passKit" { return true }
        }
        return false
    }

    @Test("the PassKit adapter uses PassKit's newer features only behind #available (or inside @available code)")
    func passKitFeaturesAreGated() throws {
        let newer = try Self.newerPassKitNames()
        #expect(newer["recurringPaymentRequest"] == Version("16.0"))
        #expect(newer["deferredPaymentRequest"] == Version("16.4"))
        #expect(newer["instantFundsOut"] == Version("17.0"))
        var ungated: [String] = []
        for (name, code) in try Self.sources("OrchardPay") where name.contains("PassKit") {
            // Each open brace pushes the availability its line (or the attribute before it) grants.
            var scopes: [Version?] = []
            var attribute: Version?
            for (number, line) in code.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                let granted = Self.iOSVersion(in: line, marker: "#available")
                if let version = Self.iOSVersion(in: line, marker: "@available") { attribute = version }
                let current = (scopes.compactMap { $0 } + [granted, attribute].compactMap { $0 }).max()
                for (feature, version) in newer where Self.usesPassKit(feature, in: line) {
                    if current.map({ $0 < version }) ?? true {
                        ungated.append("\(name):\(number + 1): \(feature) needs iOS \(version)")
                    }
                }
                for character in line {
                    if character == "{" {
                        scopes.append(granted ?? attribute)
                        attribute = nil
                    } else if character == "}" {
                        _ = scopes.popLast()
                    }
                }
            }
        }
        #expect(ungated == [])
    }

    @Test("the PassKit adapter uses no shim-only name (it must compile against PassKit itself)")
    func noShimOnlyNames() throws {
        let shimOnly = [
            "PKShimDevice", "PKPaymentAuthorizationPresenter", "presenter:", ".paymentRequest.", "PKPaymentMethod(",
            "PKPaymentToken(", "PKPayment(",
        ]
        var found: [String] = []
        for (name, code) in try Self.sources("OrchardPay") where name.contains("PassKit") {
            for symbol in shimOnly where code.contains(symbol) { found.append("\(name): \(symbol)") }
        }
        #expect(found == [])
    }
}
