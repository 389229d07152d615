import Foundation
import OrchardCrypto
import OrchardHTTP

/// The browser files the gateway serves (`orchard.js`, the demo store's page with its files under `demo/`, the
/// console under `console/`): plain files in `Sources/GatewayHTTP/Web`, compiled into the module by the
/// EmbedWebAssets build step (`EmbeddedWebFiles`), so the executable carries them wherever it is copied.
struct WebAssets: Sendable {
    /// A file, with its validator.
    struct Asset: Sendable {
        var body: Data
        var contentType: String
        /// A strong ETag: a digest of the body.
        var etag: String
    }

    /// The files by name (`orchard.js`, `console/console.js` …), decoded once.
    static let shared = WebAssets(files: EmbeddedWebFiles.files)

    /// The content types served, by file extension; a file of another type is not served.
    static let contentTypes = [
        "js": "text/javascript; charset=utf-8", "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
    ]

    let assets: [String: Asset]

    /// The files given as their path below `Web/` and their bytes in base64.
    init(files: [(path: String, base64: String)]) {
        var assets: [String: Asset] = [:]
        for (path, base64) in files {
            guard let type = Self.contentTypes[(path as NSString).pathExtension],
                let body = Data(base64Encoded: base64)
            else { continue }
            let digest = Hex.encode(Array(SHA256.hash(Array(body)).prefix(16)))
            assets[path] = Asset(body: body, contentType: type, etag: "\"\(digest)\"")
        }
        self.assets = assets
    }

    /// A cacheable answer for asset `name`: `ETag`, `Cache-Control`, and 304 when `If-None-Match` names the ETag.
    func response(_ name: String, for request: HTTPRequest) throws -> HTTPResponse {
        guard let asset = assets[name] else {
            throw HTTPAPIError.notFound("the gateway has no web file \(name)")
        }
        var headers = HTTPHeaders()
        headers["ETag"] = asset.etag
        headers["Cache-Control"] = "public, max-age=300"
        if let match = request.headers["If-None-Match"],
            match.split(separator: ",").contains(where: {
                let tag = $0.trimmingCharacters(in: .whitespaces)
                return tag == asset.etag || tag == "W/" + asset.etag || tag == "*"
            })
        {
            return HTTPResponse(status: HTTPStatus(rawValue: 304), headers: headers)
        }
        headers["Content-Type"] = asset.contentType
        return HTTPResponse(status: .ok, headers: headers, body: asset.body)
    }
}
