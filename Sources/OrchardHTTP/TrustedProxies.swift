import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The reverse proxies whose forwarding headers the server believes (`--trusted-proxy CIDR,…`).
///
/// Only when a request's peer is one of them are `Forwarded` (RFC 7239) or, without it, `X-Forwarded-For` read: the
/// addresses are walked from the right, past every trusted one, and the first untrusted address is the client. A
/// client can write anything on the left of the list, never on the right of what its proxy appends, so the address
/// found is the one the nearest trusted proxy saw. `X-Forwarded-Proto` (or `Forwarded`'s `proto`) from the trusted
/// peer tells whether the browser spoke HTTPS to the proxy. With no trusted proxies (the default), or from any
/// other peer, the headers are ignored and the client is the peer.
public struct TrustedProxies: Sendable, Equatable, CustomStringConvertible {
    /// One network: an address and how many leading bits of it match.
    public struct Network: Sendable, Equatable, CustomStringConvertible {
        /// The address's bytes (4 for IPv4, 16 for IPv6), masked to the prefix.
        let bytes: [UInt8]
        /// The prefix length in bits.
        let prefixLength: Int

        /// `address` or `address/prefix` (`10.0.0.0/8`, `::1`, `fd00::/8`); nil when it is neither.
        public init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = IPAddress.bytes(String(parts[0])) else { return nil }
            let bits = address.count * 8
            var prefix = bits
            if parts.count == 2 {
                guard let value = Int(parts[1]), (0...bits).contains(value), parts[1].allSatisfy(\.isASCII) else {
                    return nil
                }
                prefix = value
            }
            bytes = Self.masked(address, prefix)
            prefixLength = prefix
        }

        /// Whether `address` (its bytes) lies in the network.
        func contains(_ address: [UInt8]) -> Bool {
            address.count == bytes.count && Self.masked(address, prefixLength) == bytes
        }

        private static func masked(_ address: [UInt8], _ prefix: Int) -> [UInt8] {
            address.enumerated().map { index, byte in
                let kept = min(max(prefix - index * 8, 0), 8)
                return kept == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
            }
        }

        /// `address/prefix`.
        public var description: String { "\(IPAddress.text(bytes))/\(prefixLength)" }
    }

    /// The trusted networks; none by default.
    public var networks: [Network]

    /// No trusted proxy: forwarding headers are never read.
    public init() { networks = [] }

    /// The networks of `list` (`127.0.0.1,10.0.0.0/8,::1`); nil when an entry is not an address or a CIDR.
    public init?(parsing list: [String]) {
        var networks: [Network] = []
        for entry in list {
            guard let network = Network(entry.trimmingCharacters(in: .whitespaces)) else { return nil }
            networks.append(network)
        }
        self.networks = networks
    }

    /// Whether `address` (text) is in a trusted network.
    public func trusts(_ address: String) -> Bool {
        guard let bytes = IPAddress.bytes(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// Who sent the request and over what: the client address and whether the browser spoke HTTPS to a trusted
    /// proxy (`false` when no trusted proxy said so).
    public func client(peer: String?, headers: HTTPHeaders) -> (address: String?, forwardedHTTPS: Bool) {
        guard let peer, !networks.isEmpty, trusts(peer) else { return (peer, false) }
        let forwarded = headers.values(for: "Forwarded").flatMap(Self.forwardedElements)
        let chain: [String]
        let proto: String?
        if !forwarded.isEmpty {
            chain = forwarded.map { $0["for"] ?? "" }
            proto = forwarded.last?["proto"]
        } else {
            chain = headers.values(for: "X-Forwarded-For").flatMap { $0.split(separator: ",").map(String.init) }
            proto = headers.values(for: "X-Forwarded-Proto").last?.split(separator: ",").last.map(String.init)
        }
        var client = peer
        for entry in chain.reversed() {
            // An entry that is not an address (`unknown`, an obfuscated `_name`) ends the walk: the client is the
            // hop that reported it.
            guard let address = Self.address(entry) else { break }
            client = address
            if !trusts(address) { break }
        }
        let https = proto?.trimmingCharacters(in: .whitespaces).lowercased() == "https"
        return (client, https)
    }

    /// The elements of one `Forwarded` header value: each a map of lowercased parameter names to values, unquoted.
    static func forwardedElements(_ value: String) -> [[String: String]] {
        var elements: [[String: String]] = []
        var current: [String: String] = [:]
        var name = ""
        var token = ""
        var inName = true
        var quoted = false
        var escaped = false
        func endPair() {
            let key = name.trimmingCharacters(in: .whitespaces).lowercased()
            if !key.isEmpty { current[key] = token.trimmingCharacters(in: .whitespaces) }
            name = ""
            token = ""
            inName = true
        }
        for character in value {
            if quoted {
                if escaped {
                    token.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    token.append(character)
                }
                continue
            }
            switch character {
            case "=" where inName: inName = false
            case "\"" where !inName: quoted = true
            case ";": endPair()
            case ",":
                endPair()
                elements.append(current)
                current = [:]
            default:
                if inName { name.append(character) } else { token.append(character) }
            }
        }
        endPair()
        elements.append(current)
        return elements
    }

    /// The address a forwarding entry names, without its port or IPv6 brackets, in canonical form; nil for
    /// anything else.
    static func address(_ entry: String) -> String? {
        var text = entry.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("[") {
            // `[2001:db8::1]` or `[2001:db8::1]:4711`.
            guard let close = text.firstIndex(of: "]") else { return nil }
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1 {
            // `192.0.2.43:47011`.
            text = String(text[..<text.firstIndex(of: ":")!])
        }
        return IPAddress.bytes(text).map(IPAddress.text)
    }

    /// The networks, comma-separated.
    public var description: String { networks.map(\.description).joined(separator: ",") }
}

/// IPv4 and IPv6 addresses between text and bytes.
enum IPAddress {
    /// The 4 or 16 bytes of `text`; nil when it is not an address.
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            // An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, how a dual-stack socket reports IPv4 peers) is
            // the IPv4 address.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return Array(bytes[12...])
            }
            return bytes
        }
        return nil
    }

    /// The canonical text of 4 or 16 bytes.
    static func text(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var raw = bytes
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &raw, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
