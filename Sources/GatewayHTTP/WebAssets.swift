import Foundation
import OrchardCrypto
import OrchardHTTP

/// The browser files the gateway serves (`orchard.js`, the demo store's page with its files under `demo/`, the
/// console under `console/`):
/// plain files in `Sources/GatewayHTTP/Web`, copied as this module's SwiftPM resources next to the built executable.
struct WebAssets: Sendable {
    /// A file, with its validator.
    struct Asset: Sendable {
        var body: Data
        var contentType: String
        /// A strong ETag: a digest of the body.
        var etag: String
    }

    /// The files by name, loaded once.
    static let shared = WebAssets(directory: locate())

    let assets: [String: Asset]

    /// The files of `directory` (none when it is nil).
    init(directory: URL?) {
        var assets: [String: Asset] = [:]
        let types = [
            "js": "text/javascript; charset=utf-8", "html": "text/html; charset=utf-8",
            "css": "text/css; charset=utf-8",
        ]
        // The top level and the console's and the demo store's folders (their files are `console/<file>` …).
        for folder in ["", "console/", "demo/"] {
            guard let directory,
                let names = try? FileManager.default.contentsOfDirectory(
                    atPath: directory.appendingPathComponent(folder).path)
            else { continue }
            for name in names {
                guard let type = types[(name as NSString).pathExtension],
                    let body = try? Data(contentsOf: directory.appendingPathComponent(folder + name))
                else { continue }
                let digest = Hex.encode(Array(SHA256.hash(Array(body)).prefix(16)))
                assets[folder + name] = Asset(body: body, contentType: type, etag: "\"\(digest)\"")
            }
        }
        self.assets = assets
    }

    /// The `Web` directory of the resource bundle, looked up next to the running executable (where
    /// `swift build` puts it), without the generated accessor's crash when it is missing.
    static func locate() -> URL? {
        let names = ["Orchard_GatewayHTTP.resources", "Orchard_GatewayHTTP.bundle"]
        var bases = [Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL { bases.append(executable.deletingLastPathComponent()) }
        for base in bases {
            for name in names {
                for inner in ["Web", "Contents/Resources/Web"] {
                    let candidate = base.appendingPathComponent(name).appendingPathComponent(inner)
                    if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("orchard.js").path) {
                        return candidate
                    }
                }
            }
        }
        return nil
    }

    /// A cacheable answer for asset `name`: `ETag`, `Cache-Control`, and 304 when `If-None-Match` names the ETag.
    func response(_ name: String, for request: HTTPRequest) throws -> HTTPResponse {
        guard let asset = assets[name] else {
            throw HTTPAPIError.notFound("the gateway was built without its web files (\(name))")
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
