-- classify.lua: HAProxy (>= 2.5, built with Lua as Debian's is) asks
-- classify-serve's forward-auth listener about each request, with
-- core.httpclient, and leaves the answer in txn.classify_verdict and
-- txn.classify_reason for haproxy.cfg to act on.
-- Usage: http-request lua.classify http://IP:PORT/
-- If classify-serve cannot be reached the verdict is "error", which
-- haproxy.cfg lets through (fail open); match it too to fail closed.
-- The client's method, URI and address are set here, replacing any the
-- client sent: classify-serve's haproxy= listener reads these headers.
core.register_action("classify", { "http-req" }, function(txn, url)
    local headers = {}
    -- the client's headers (HAProxy's tables count from 0)
    for name, values in pairs(txn.http:req_get_headers()) do
        local list = {}
        for i = 0, #values do list[#list + 1] = values[i] end
        headers[name] = list
    end
    -- a GET without a body is sent, whatever the client's request had
    headers["content-length"] = nil
    headers["transfer-encoding"] = nil
    headers["x-forwarded-method"] = { txn.sf:method() }
    headers["x-forwarded-uri"] = { txn.sf:pathq() }
    -- append the client's address, as a proxy does
    local xff = txn.sf:req_fhdr("x-forwarded-for")
    if xff and xff ~= "" then xff = xff .. ", " .. txn.sf:src() else xff = txn.sf:src() end
    headers["x-forwarded-for"] = { xff }
    headers["x-real-ip"] = nil
    local res = core.httpclient():get{ url = url, headers = headers, timeout = 2000 }
    local verdict, reason = "error", ""
    local h = res and res.headers or {}
    if h["x-classify-verdict"] then
        verdict = h["x-classify-verdict"][0]
        if h["x-classify-reason"] then reason = h["x-classify-reason"][0] end
    elseif res and res.status and res.status >= 400 and res.status < 500 then
        -- classify-serve refused to classify the request (400 malformed,
        -- 408, 431 too large): reject, as nginx and Caddy do; HAProxy's
        -- own 503 or 504 (unreachable, timeout) stays "error"
        verdict, reason = "reject", "classify-serve-" .. res.status
    end
    txn:set_var("txn.classify_verdict", verdict)
    txn:set_var("txn.classify_reason", reason)
end, 1)
