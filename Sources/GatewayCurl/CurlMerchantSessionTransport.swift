import Foundation
import Gateway

/// The ``MerchantSessionTransport`` on libcurl: https only, TLS 1.2 or later, the merchant identity certificate
/// and key handed to libcurl from memory for each request, no connection kept afterwards, no redirect followed,
/// Apple's body read up to 64 KiB.
public final class CurlMerchantSessionTransport: MerchantSessionTransport {
    /// The client the requests go through.
    public let client: CurlHTTPClient

    /// The largest merchant session read (Apple's are about 2 KiB).
    public static let maximumResponseBytes = 64 << 10

    /// The client configuration: https only, TLS 1.2+, no connection reuse, no idle handles; `caBundlePath`
    /// replaces the system CAs (a sandbox stand-in for Apple), else the system's are used.
    public static func configuration(caBundlePath: String? = nil) -> CurlHTTPClient.Configuration {
        var configuration = CurlHTTPClient.Configuration()
        configuration.httpsOnly = true
        configuration.requiresTLS12 = true
        configuration.forbidsConnectionReuse = true
        configuration.maximumIdleHandles = 0
        configuration.maximumResponseBytes = maximumResponseBytes
        configuration.caBundlePath = caBundlePath
        return configuration
    }

    /// A transport trusting `caBundlePath` (or the system CAs).
    public init(caBundlePath: String? = nil) {
        client = CurlHTTPClient(configuration: Self.configuration(caBundlePath: caBundlePath))
    }

    public func postMerchantSession(
        url: String, body: Data, identity: MerchantIdentityMaterial, timeout: TimeInterval
    ) throws(MerchantSessionTransportError) -> (status: Int, body: Data) {
        let request = CurlHTTPClient.Request(
            method: .post, url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: body, timeout: timeout, clientIdentity: identity)
        let response: CurlHTTPClient.Response
        do { response = try client.perform(request) } catch {
            throw MerchantSessionTransportError(code: error.code.rawValue, reason: error.reason)
        }
        guard !response.bodyTruncated else {
            throw MerchantSessionTransportError(
                code: "response_too_large", reason: "the answer is over \(Self.maximumResponseBytes) bytes")
        }
        return (response.status, response.body)
    }
}
