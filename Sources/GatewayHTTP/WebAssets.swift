import Foundation
import OrchardCrypto
import OrchardHTTP

/// The browser files the gateway serves (`orchard.js` and `orchard-sandbox-wallet.js`, the demo store's page with
/// its files under `demo/`, the console under `console/`): plain files in `Sources/GatewayHTTP/Web`, compiled into
/// the module by the EmbedWebAssets build step (`EmbeddedWebFiles`), so the executable carries them wherever it is
/// copied.
///
/// The browser SDK's files (``sdkFiles``) are served under `/sdk/v1/` by their name and by a content-hashed name
/// (``Asset/versionedName``) that never changes meaning, so it is cached as immutable and pinned with its
/// ``Asset/integrity``.
struct WebAssets: Sendable {
    /// A file, with its validator.
    struct Asset: Sendable {
        var body: Data
        var contentType: String
        /// The digest naming this body: 32 hex digits of its SHA-256.
        var digest: String
        /// The file's Subresource Integrity value: `sha384-` and the base64 of the body's SHA-384.
        var integrity: String

        init(body: Data, contentType: String) {
            self.body = body
            self.contentType = contentType
            digest = Hex.encode(Array(SHA256.hash(Array(body)).prefix(16)))
            integrity = "sha384-" + Data(SHA384.hash(Array(body))).base64EncodedString()
        }

        /// A strong ETag: the digest.
        var etag: String { "\"\(digest)\"" }

        /// `name` with the digest before its extension: `orchard.js` → `orchard.<digest>.js`.
        func versionedName(of name: String) -> String {
            let dot = name.lastIndex(of: ".") ?? name.endIndex
            return name[..<dot] + "." + digest + name[dot...]
        }

        /// The path of SDK file `name` under its versioned name: `/sdk/v1/orchard.<digest>.js`.
        func versionedPath(of name: String) -> String { WebAssets.sdkPath + versionedName(of: name) }
    }

    /// The browser SDK's files, served under `/sdk/v1/`. orchard.js loads the sandbox wallet's by its versioned
    /// path and integrity, which the gateway writes into it (``init(files:)``).
    static let sdkFiles = ["orchard.js", "orchard-sandbox-wallet.js"]

    /// Where the browser SDK's files are served.
    static let sdkPath = "/sdk/v1/"

    /// The files by name (`orchard.js`, `console/console.js` …), decoded once.
    static let shared = WebAssets(files: EmbeddedWebFiles.files)

    /// The content types served, by file extension; a file of another type is not served.
    static let contentTypes = [
        "js": "text/javascript; charset=utf-8", "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
    ]

    let assets: [String: Asset]

    /// The browser SDK's files by their versioned name (`orchard.<digest>.js` → `orchard.js`).
    let sdkVersionedNames: [String: String]

    /// The files given as their path below `Web/` and their bytes in base64. orchard.js gets the sandbox wallet's
    /// versioned path and integrity in place of its `{{ORCHARD_SANDBOX_WALLET_SRC}}` and
    /// `{{ORCHARD_SANDBOX_WALLET_INTEGRITY}}`.
    init(files: [(path: String, base64: String)]) {
        var assets: [String: Asset] = [:]
        for (path, base64) in files {
            guard let type = Self.contentTypes[(path as NSString).pathExtension],
                let body = Data(base64Encoded: base64)
            else { continue }
            assets[path] = Asset(body: body, contentType: type)
        }
        if let wallet = assets["orchard-sandbox-wallet.js"], let core = assets["orchard.js"] {
            let linked = String(decoding: core.body, as: UTF8.self)
                .replacingOccurrences(
                    of: "{{ORCHARD_SANDBOX_WALLET_SRC}}",
                    with: wallet.versionedPath(of: "orchard-sandbox-wallet.js")
                )
                .replacingOccurrences(of: "{{ORCHARD_SANDBOX_WALLET_INTEGRITY}}", with: wallet.integrity)
            assets["orchard.js"] = Asset(body: Data(linked.utf8), contentType: core.contentType)
        }
        self.assets = assets
        var versioned: [String: String] = [:]
        for name in Self.sdkFiles {
            if let asset = assets[name] { versioned[asset.versionedName(of: name)] = name }
        }
        sdkVersionedNames = versioned
    }

    /// The answer for `/sdk/v1/{file}`: an SDK file by its name (cached for 5 minutes, like every asset) or by its
    /// versioned name (`Cache-Control: public, max-age=31536000, immutable`). Any page may load them, with
    /// `crossorigin` and `integrity` too (`Access-Control-Allow-Origin: *`: they are public and read no cookie).
    func sdkResponse(_ file: String, for request: HTTPRequest) throws -> HTTPResponse {
        var response: HTTPResponse
        if let name = sdkVersionedNames[file] {
            response = try self.response(name, for: request, immutable: true)
        } else if Self.sdkFiles.contains(file) {
            response = try self.response(file, for: request)
        } else {
            throw HTTPAPIError.notFound("the browser SDK has no file \(file)")
        }
        response.headers["Access-Control-Allow-Origin"] = "*"
        return response
    }

    /// The browser SDK's files with their versioned paths and integrity (`GET /sdk/v1/integrity.json`).
    var sdkIntegrity: [String: Any] {
        [
            "files": Self.sdkFiles.compactMap { name -> [String: Any]? in
                guard let asset = assets[name] else { return nil }
                return [
                    "name": name, "path": Self.sdkPath + name,
                    "versioned_path": asset.versionedPath(of: name), "integrity": asset.integrity,
                ]
            }
        ]
    }

    /// A cacheable answer for asset `name`: `ETag`, `Cache-Control`, and 304 when `If-None-Match` names the ETag.
    /// `immutable`: the name is a versioned one, whose body never changes.
    func response(_ name: String, for request: HTTPRequest, immutable: Bool = false) throws -> HTTPResponse {
        guard let asset = assets[name] else {
            throw HTTPAPIError.notFound("the gateway has no web file \(name)")
        }
        var headers = HTTPHeaders()
        headers["ETag"] = asset.etag
        headers["Cache-Control"] = immutable ? "public, max-age=31536000, immutable" : "public, max-age=300"
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
