import Foundation
import Gateway
import OrchardCrypto
import Testing

@Suite("Secrets at rest and in descriptions")
struct SecretHandlingTests {
    @Test(
        "a master key file open to other users is refused, in sandbox and production alike",
        arguments: [0o644, 0o640, 0o604, 0o660, 0o666])
    func masterKeyFilePermissions(mode: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-mk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("master.key")
        let key = try MasterKey.load(file: file, environment: .sandbox)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        for environment in [GatewayEnvironment.sandbox, .production] {
            let error = expectGatewayError(.masterKeyInvalid) {
                try MasterKey.load(file: file, environment: environment)
            }
            #expect(error?.reason.contains("chmod 600") == true)
            #expect(error?.description.contains(key.hexString()) == false)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: file.path)
        #expect(try MasterKey.load(file: file, environment: .production).keyID == key.keyID)
    }
}
