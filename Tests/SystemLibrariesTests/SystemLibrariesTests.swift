import CCurl
import CMicroHTTPD
import COpenSSL
import CPostgres
import CSQLite
import Testing

/// Each C library links and answers its version call.
@Suite("System libraries")
struct SystemLibrariesTests {
    @Test("OpenSSL 3 links and reports a 3.x version")
    func openSSL() {
        let number = orchard_openssl_version_number()
        #expect(number >> 28 == 3, "OpenSSL major version should be 3, got \(String(number, radix: 16))")
        let text = String(cString: orchard_openssl_version_text())
        #expect(text.hasPrefix("OpenSSL 3."))
    }

    @Test("SQLite 3 links and reports a 3.x version")
    func sqlite() {
        #expect(sqlite3_libversion_number() >= 3_035_000)
        #expect(String(cString: sqlite3_libversion()).hasPrefix("3."))
    }

    @Test("libpq links and reports its version")
    func libpq() {
        #expect(orchard_pq_lib_version() >= 100_000)
    }

    @Test("libcurl links and reports its version")
    func libcurl() {
        let text = String(cString: orchard_curl_version_text())
        #expect(text.hasPrefix("libcurl/"))
        let info = orchard_curl_version_info()
        #expect(info?.pointee.version_num ?? 0 >= 0x07_40_00)
    }

    @Test("libmicrohttpd links and reports its version")
    func libmicrohttpd() {
        let text = String(cString: orchard_mhd_version_text())
        #expect(text.split(separator: ".").count >= 2)
        #expect(text.hasPrefix("0.9") || text.hasPrefix("1."))
    }
}
