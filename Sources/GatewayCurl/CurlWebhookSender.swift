import Foundation
import Gateway

/// The ``WebhookSender`` on libcurl: one POST per attempt through a ``CurlHTTPClient`` that follows no
/// redirects and speaks only http and https. The response body is read up to a small cap (a PayerMax notification's
/// acknowledgement is read from it).
public final class CurlWebhookSender: WebhookSender {
    /// The client the requests go through.
    public let client: CurlHTTPClient

    /// The client configuration for webhooks: system CAs, http and https, a 4 KiB response cap.
    public static var defaultConfiguration: CurlHTTPClient.Configuration {
        var configuration = CurlHTTPClient.Configuration()
        configuration.maximumResponseBytes = 4096
        return configuration
    }

    /// A sender on `client` (by default one with ``defaultConfiguration``).
    public init(client: CurlHTTPClient = CurlHTTPClient(configuration: CurlWebhookSender.defaultConfiguration)) {
        self.client = client
    }

    public func send(url: String, body: Data, headers: [(String, String)], timeout: TimeInterval) -> WebhookSendResult {
        do {
            let response = try client.post(url: url, headers: headers, body: body, timeout: timeout)
            return .answered(status: response.status, body: response.body)
        } catch {
            return .failed(Self.transportError(error))
        }
    }

    /// The webhook view of a libcurl failure.
    static func transportError(_ error: CurlError) -> WebhookTransportError {
        let code: WebhookTransportError.Code
        switch error.code {
        case .urlRefused: code = .urlRefused
        case .connectFailed: code = .connectFailed
        case .tlsFailed: code = .tlsFailed
        case .timeout: code = .timeout
        default: code = .transportFailed
        }
        return WebhookTransportError(code: code, reason: error.reason)
    }
}
