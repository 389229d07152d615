import Foundation
import OrchardCrypto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The 256-bit key that wraps every record's data key. It comes from configuration (64 hex digits);
/// a sandbox may generate one next to its database on first run.
public final class MasterKey: Sendable {
    let bytes: SecureBytes
    /// A short public identifier (first 8 hex digits of SHA-256 of the key), stored with each envelope.
    public let keyID: String

    /// A key from its 32 bytes.
    public init(bytes: SecureBytes) throws(GatewayError) {
        guard bytes.count == 32 else { throw GatewayError(.masterKeyInvalid, "a master key is 32 bytes") }
        self.bytes = bytes
        keyID = String(Hex.encode(bytes.withUnsafeBytes { SHA256.hash($0) }).prefix(8))
    }

    /// A key from 64 hex digits (surrounding whitespace ignored).
    public convenience init(hex: String) throws(GatewayError) {
        guard var raw = Hex.decode(hex.trimmingCharacters(in: .whitespacesAndNewlines)), raw.count == 32 else {
            throw GatewayError(.masterKeyInvalid, "a master key is 64 hex digits")
        }
        defer { SecureBytes.zero(&raw) }
        try self.init(bytes: SecureBytes(raw))
    }

    /// A new random key.
    public static func generate() throws(GatewayError) -> MasterKey {
        do { return try MasterKey(bytes: SecureBytes(randomCount: 32)) } catch let error as GatewayError {
            throw error
        } catch { throw GatewayError(.internalError, "random generator failed") }
    }

    /// The hex form, for writing the key file.
    public func hexString() -> String { bytes.withUnsafeBytes { Hex.encode($0) } }

    /// The key file kept next to a database: `<database>.master-key`.
    public static func defaultFile(forDatabase path: String) -> URL { URL(fileURLWithPath: path + ".master-key") }

    /// The master key from `ORCHARD_MASTER_KEY` (64 hex digits) when set, else from the file next to the
    /// database (generated there in sandbox on first run).
    public static func resolve(
        databasePath: String, environment: GatewayEnvironment, variables: [String: String]
    ) throws(GatewayError) -> MasterKey {
        if let hex = variables["ORCHARD_MASTER_KEY"], !hex.isEmpty { return try MasterKey(hex: hex) }
        return try load(forDatabase: databasePath, environment: environment)
    }

    /// The key in `<database>.master-key`. In sandbox a missing file is generated, but only for a database
    /// that does not exist yet or is empty: a new key cannot open what an existing database has sealed, so
    /// that case is `master_key_missing`, as in production.
    public static func load(
        forDatabase databasePath: String, environment: GatewayEnvironment
    ) throws(GatewayError)
        -> MasterKey
    {
        let file = defaultFile(forDatabase: databasePath)
        var info = stat()
        if environment == .sandbox, stat(databasePath, &info) == 0, info.st_size > 0,
            !FileManager.default.fileExists(atPath: file.path)
        {
            throw GatewayError(
                .masterKeyMissing,
                "the database \(databasePath) exists but its master key file \(file.path) does not; pass its master "
                    + "key (--master-key or ORCHARD_MASTER_KEY) instead of generating a new one that cannot open the "
                    + "stored secrets")
        }
        return try load(file: file, environment: environment)
    }

    /// The key in `file` (64 hex digits), nil when there is no such file. A file that other users may read
    /// or write (any group or other permission bit) is refused with `master_key_invalid`: it must be mode 0600.
    public static func read(file: URL) throws(GatewayError) -> MasterKey? {
        var info = stat()
        guard stat(file.path, &info) == 0 else { return nil }
        guard info.st_mode & 0o077 == 0 else {
            throw GatewayError(
                .masterKeyInvalid, "the master key file \(file.path) is open to other users (chmod 600 it)")
        }
        guard let text = try? String(contentsOf: file, encoding: .utf8) else {
            throw GatewayError(.masterKeyInvalid, "cannot read the master key file \(file.path)")
        }
        return try MasterKey(hex: text)
    }

    /// The key for `environment`: read from `file` when it exists; in sandbox, generated and written there
    /// (mode 0600) when missing; in production, `master_key_missing` when missing. See ``read(file:)``.
    public static func load(file: URL, environment: GatewayEnvironment) throws(GatewayError) -> MasterKey {
        if let key = try read(file: file) { return key }
        guard environment == .sandbox else {
            throw GatewayError(.masterKeyMissing, "production needs a master key (none at \(file.path))")
        }
        let key = try generate()
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            // Another process created it first: use theirs.
            if let key = try read(file: file) { return key }
            throw GatewayError(.masterKeyInvalid, "cannot create \(file.path)")
        }
        var text = Array((key.hexString() + "\n").utf8)
        defer { SecureBytes.zero(&text) }
        let written = text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
        close(descriptor)
        guard written == text.count else { throw GatewayError(.masterKeyInvalid, "cannot write \(file.path)") }
        return key
    }
}

/// Envelope encryption: each secret is sealed with AES-256-GCM under a fresh data key, and the data key
/// is sealed under the master key. The record's context (table and id) is authenticated, so a sealed
/// value cannot be moved to another record.
///
/// Layout: `0x01 | keyID (8 ASCII) | wrapNonce (12) | wrappedKey (32+16) | nonce (12) | ciphertext+tag`.
public struct EnvelopeCipher: Sendable {
    public let masterKey: MasterKey

    public init(masterKey: MasterKey) { self.masterKey = masterKey }

    /// Seals `plaintext` for the record named by `context`.
    public func seal<B: ContiguousBytes>(_ plaintext: B, context: String) throws(GatewayError) -> Data {
        do {
            var dataKey = try SecureRandom.bytes(32)
            defer { SecureBytes.zero(&dataKey) }
            let wrapNonce = try SecureRandom.bytes(12)
            let nonce = try SecureRandom.bytes(12)
            let aad = Array(context.utf8)
            let wrapped = try masterKey.bytes.withUnsafeBytes { key throws(CryptoError) in
                try AESGCM.seal(dataKey, key: key, nonce: wrapNonce, authenticating: Array("dk:".utf8) + aad)
            }
            var input = plaintext.withUnsafeBytes { Array($0) }
            defer { SecureBytes.zero(&input) }
            let sealed = try AESGCM.seal(input, key: dataKey, nonce: nonce, authenticating: aad)
            var out = Data([1])
            out.append(contentsOf: Array(masterKey.keyID.utf8))
            out.append(contentsOf: wrapNonce)
            out.append(contentsOf: wrapped)
            out.append(contentsOf: nonce)
            out.append(contentsOf: sealed)
            return out
        } catch {
            throw GatewayError(.internalError, "sealing failed: \(error)")
        }
    }

    /// Seals a string.
    public func seal(string: String, context: String) throws(GatewayError) -> Data {
        try seal(Array(string.utf8), context: context)
    }

    /// Opens a value sealed for `context`.
    public func open(_ sealed: Data, context: String) throws(GatewayError) -> SecureBytes {
        let bytes = [UInt8](sealed)
        let header = 1 + 8 + 12 + 48 + 12
        guard bytes.count >= header + AESGCM.tagLength, bytes[0] == 1 else {
            throw GatewayError(.masterKeyInvalid, "malformed sealed value")
        }
        guard String(decoding: bytes[1..<9], as: UTF8.self) == masterKey.keyID else {
            throw GatewayError(.masterKeyInvalid, "value sealed under another master key")
        }
        let aad = Array(context.utf8)
        do {
            let dataKey = try masterKey.bytes.withUnsafeBytes { key throws(CryptoError) in
                try AESGCM.open(
                    Array(bytes[21..<69]), key: key, nonce: Array(bytes[9..<21]),
                    authenticating: Array("dk:".utf8) + aad)
            }
            return try dataKey.withUnsafeBytes { key throws(CryptoError) in
                try AESGCM.open(Array(bytes[81...]), key: key, nonce: Array(bytes[69..<81]), authenticating: aad)
            }
        } catch {
            throw GatewayError(.masterKeyInvalid, "sealed value does not open for its record")
        }
    }

    /// Opens a sealed string.
    public func openString(_ sealed: Data, context: String) throws(GatewayError) -> String {
        let bytes = try open(sealed, context: context)
        return bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
