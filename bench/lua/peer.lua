-- bench/lua/peer.lua: the Lua peer of the benchmark. The same checks as
-- libclassify's programs, written as an operator would write them for
-- OpenResty or HAProxy: string.find with plain literals where the rule is
-- a literal, Lua patterns where it is a regex, the User-Agent lower-cased
-- once for the caseless checks, and the first hit decides.
--
--   local peer = dofile("bench/lua/peer.lua")
--   local classify = peer.load("peerdata.txt", "default")  -- or "ai_robots"
--   local verdict, reason = classify(req)  -- "accept"|"reject", string|nil
--
-- req = {method=, path=, query=, h={[lower-case name]=value, ...}}.
--
-- The programs mirrored (see bench/lua/README.md):
--   ai_robots  import "ai_robots"; main = ai_robots.check(req); accept
--   default    stdlib/default.clf's main
-- The names and patterns come from peerdata.txt (bench/peerdata.py), the
-- rest of the rules is written out below after stdlib/*.clf.
--
-- Portable between Lua 5.1 (LuaJIT 2.1) and Lua 5.4.

local find, lower, byte, sub, match = string.find, string.lower, string.byte, string.sub, string.match
local tonumber = tonumber

local M = {}

-- [A-Za-z0-9_]: a word character for contains_word
local WORD = {}
for c = byte("0"), byte("9") do WORD[c] = true end
for c = byte("A"), byte("Z") do WORD[c] = true end
for c = byte("a"), byte("z") do WORD[c] = true end
WORD[byte("_")] = true

-- Whether w occurs in s with no word character right before or after it
-- (any occurrence: a hit inside a word does not end the search).
local function has_word(s, w)
  local n = #w
  local init = 1
  while true do
    local i = find(s, w, init, true)
    if not i then return false end
    if (i == 1 or not WORD[byte(s, i - 1)]) and not WORD[byte(s, i + n)] then
      return true
    end
    init = i + 1
  end
end

local function split_tabs(line)
  local out, init = {}, 1
  while true do
    local i = find(line, "\t", init, true)
    if not i then
      out[#out + 1] = sub(line, init)
      return out
    end
    out[#out + 1] = sub(line, init, i - 1)
    init = i + 1
  end
end

-- Reads peerdata.txt: the ai.robots.txt categories in check order (lower-
-- cased names, token patterns for a lower-cased UA) and the crawler
-- patterns by tag.
local function read_peerdata(path)
  local f, err = io.open(path, "rb")
  if not f then error("cannot open " .. tostring(path) .. ": " .. tostring(err)) end
  local cats, by_cat = {}, {}
  local tags, by_tag = {}, {}
  local n = 0
  for line in f:lines() do
    n = n + 1
    if sub(line, -1) == "\r" then error(path .. ":" .. n .. ": CR in the file") end
    local fl = split_tabs(line)
    local kind = fl[1]
    if kind == "AI_NAME" or kind == "AI_TOKEN" or kind == "LUA_AI_TOKEN" then
      local c = by_cat[fl[2]]
      if not c then
        c = { reason = "ai-robots-txt:" .. fl[2], names = {}, seen = {}, tokens = {} }
        by_cat[fl[2]] = c
        cats[#cats + 1] = c
      end
      if kind == "AI_NAME" then
        local name = lower(fl[3])
        if not c.seen[name] then -- pairs that differ only in case
          c.seen[name] = true
          c.names[#c.names + 1] = name
        end
      elseif kind == "LUA_AI_TOKEN" then
        if fl[3] ~= "pattern" or #fl ~= 4 then error(path .. ":" .. n .. ": bad LUA_AI_TOKEN") end
        c.tokens[#c.tokens + 1] = fl[4]
      end
    elseif kind == "LUA_CRAWLER" then
      if #fl ~= 4 or (fl[3] ~= "plain" and fl[3] ~= "pattern") then
        error(path .. ":" .. n .. ": bad LUA_CRAWLER")
      end
      local t = by_tag[fl[2]]
      if not t then
        t = {}
        by_tag[fl[2]] = t
        tags[#tags + 1] = fl[2]
      end
      t[#t + 1] = { fl[4], fl[3] == "plain" }
    elseif kind ~= "CRAWLER" then
      error(path .. ":" .. n .. ": unknown record " .. tostring(kind))
    end
  end
  f:close()
  if #cats == 0 or #tags == 0 then error(path .. ": no AI_NAME or no LUA_CRAWLER records") end
  return cats, tags, by_tag
end

-- ai_robots.check on a lower-cased User-Agent: the reason, or nil (pass).
local function make_ai_check(cats)
  local ncats = #cats
  return function(path, lua)
    if path == "/robots.txt" then return nil end
    for k = 1, ncats do
      local c = cats[k]
      local names = c.names
      for j = 1, #names do
        if has_word(lua, names[j]) then return c.reason end
      end
      local tokens = c.tokens
      for j = 1, #tokens do
        if find(lua, tokens[j]) then return c.reason end
      end
    end
    return nil
  end
end

-- Whether ua matches any pattern of a list of {lua, plain}.
local function any_pattern(ua, list)
  for j = 1, #list do
    local p = list[j]
    if find(ua, p[1], 1, p[2]) then return true end
  end
  return false
end

function M.load(peerdata_path, program)
  local cats, tags, by_tag = read_peerdata(peerdata_path)
  local ai_check = make_ai_check(cats)

  if program == "ai_robots" then
    return function(req)
      local r = ai_check(req.path, lower(req.h["user-agent"] or ""))
      if r then return "reject", r end
      return "accept", nil
    end
  end
  if program ~= "default" then error("unknown program " .. tostring(program)) end

  -- stdlib/crawlers.clf: the tags default.check rejects, in its order,
  -- then all the other tags (is_crawler: pass).
  local REJECTED = { "ai-crawler", "browser-automation", "scanner", "seo" }
  local reject_lists, reject_reasons, other = {}, {}, {}
  local is_rejected = {}
  for k, t in ipairs(REJECTED) do
    if not by_tag[t] then error(peerdata_path .. ": no crawler tag " .. t) end
    reject_lists[k] = by_tag[t]
    reject_reasons[k] = "crawler:" .. t
    is_rejected[t] = true
  end
  for _, t in ipairs(tags) do
    if not is_rejected[t] then
      local list = by_tag[t]
      for j = 1, #list do other[#other + 1] = list[j] end
    end
  end
  local nrej = #REJECTED

  -- default.clf KEEP_WORKING: /^\/(?:robots\.txt|sitemap\.xml|favicon\.(?:ico|png|gif|jpg|jpeg|svg))\z|^\/\.well-known\//
  local KEEP = {
    ["/robots.txt"] = true, ["/sitemap.xml"] = true,
    ["/favicon.ico"] = true, ["/favicon.png"] = true, ["/favicon.gif"] = true,
    ["/favicon.jpg"] = true, ["/favicon.jpeg"] = true, ["/favicon.svg"] = true,
  }
  local UNCLEAN = { "..", "%2e", "%2f", "%5c", "//" } -- caseless: on lower(path)

  -- headless.clf
  local AUTOMATION = { "Puppeteer", "PuppeteerSharp", "Playwright", "Selenium", "SeleniumBase", "HeadlessShell" }

  local function headless_check(ua, lua, h)
    local brands = h["sec-ch-ua"] or ""
    if find(ua, "HeadlessChromium", 1, true) or find(brands, "HeadlessChromium", 1, true) then
      return "headless:chromium"
    end
    if find(ua, "HeadlessChrome", 1, true) or find(brands, "HeadlessChrome", 1, true) then
      return "headless:chrome"
    end
    if find(lua, "lightpanda", 1, true) or find(lower(brands), "lightpanda", 1, true) then
      return "headless:lightpanda"
    end
    if find(ua, "PhantomJS", 1, true) then return "headless:phantomjs" end
    for j = 1, #AUTOMATION do
      if has_word(ua, AUTOMATION[j]) then return "headless:automation" end
    end
    return nil
  end

  -- browsers.clf
  local ODD_BUT_REAL = {
    "Kindle/", "Silk/", "Kobo", "; wv)", "SeaMonkey/", "Falkon/",
    "PaleMoon/", "Goanna/", "Waterfox/", "SamsungBrowser/",
  }
  local function odd_but_real(ua)
    for j = 1, #ODD_BUT_REAL do
      if find(ua, ODD_BUT_REAL[j], 1, true) then return true end
    end
    return false
  end

  -- capture(/(?:Chrome|CriOS)\/(\d+)/, 1).to_int(): the leftmost match's digits
  local function chrome_major(ua)
    local i1, _, d1 = find(ua, "Chrome/(%d+)")
    local i2, _, d2 = find(ua, "CriOS/(%d+)")
    local d = d1
    if i2 and (not i1 or i2 < i1) then d = d2 end
    return d and tonumber(d) or 0
  end

  local function firefox_major(ua)
    local d = match(ua, "Firefox/(%d+)")
    return d and tonumber(d) or 0
  end

  -- capture(/Version\/(\d+)[.0-9]* (?:Mobile\/\S+ )?Safari\//, 1): the
  -- leftmost match of either form of the optional group
  local function safari_version(ua)
    local i1, _, d1 = find(ua, "Version/(%d+)[.0-9]* Safari/")
    local i2, _, d2 = find(ua, "Version/(%d+)[.0-9]* Mobile/%S+ Safari/")
    local d = d1
    if i2 and (not i1 or i2 < i1) then d = d2 end
    return d and tonumber(d) or 0
  end

  -- lower(x-forwarded-proto).capture(/([^,]*)\z/, 1).trim() == "http"
  local function plain_http(h)
    local proto = h["x-forwarded-proto"]
    if not proto then return false end
    local last = match(lower(proto), "[^,]*$")
    return find(last, "^[ \t\r\n]*http[ \t\r\n]*$") ~= nil
  end

  local function ua_platform(ua)
    if find(ua, "Android", 1, true) then return "Android" end
    if find(ua, "CrOS", 1, true) then return "Chrome OS" end
    if find(ua, "iPhone", 1, true) or find(ua, "iPad", 1, true) then return "iOS" end
    if find(ua, "Windows", 1, true) then return "Windows" end
    if find(ua, "Macintosh", 1, true) then return "macOS" end
    if find(ua, "Linux", 1, true) or find(ua, "X11", 1, true) then return "Linux" end
    return ""
  end

  local function check_headers(ua, h)
    if sub(ua, 1, 12) ~= "Mozilla/5.0 " or odd_but_real(ua) or plain_http(h) then return nil end
    local chromium = find(ua, "Chrome/", 1, true) or find(ua, "CriOS/", 1, true) or find(ua, "EdgiOS/", 1, true)
    local firefox = find(ua, "Firefox/", 1, true)
    local safari = find(ua, "Safari/", 1, true) and find(ua, "Version/", 1, true) and not chromium
    local sends_fetch = (chromium and chrome_major(ua) >= 76)
      or (firefox and firefox_major(ua) >= 90)
      or (safari and safari_version(ua) >= 17)
    if sends_fetch and h["sec-fetch-mode"] == nil then return "fake-browser:no-sec-fetch" end
    local platform = h["sec-ch-ua-platform"]
    if platform ~= nil then
      if not find(platform, '^"[^"]*"$') then return "fake-browser:client-hints" end
      local named = ua_platform(ua)
      if named ~= "" and sub(platform, 2, #platform - 1) ~= named then
        return "fake-browser:client-hints"
      end
    end
    local brands = h["sec-ch-ua"] or ""
    if brands ~= "" and (find(brands, '"Microsoft Edge"', 1, true) ~= nil) ~= (find(ua, "Edg/", 1, true) ~= nil) then
      return "fake-browser:edge-brand"
    end
    return nil
  end

  -- default.clf's main: check(req); accept
  return function(req)
    local h, path = req.h, req.path
    if KEEP[path] or sub(path, 1, 13) == "/.well-known/" then
      local lp = lower(path)
      local clean = true
      for j = 1, #UNCLEAN do
        if find(lp, UNCLEAN[j], 1, true) then clean = false break end
      end
      if clean then return "accept", "well-known-path" end
    end
    local ua = h["user-agent"] or ""
    if find(ua, "^[ \t,]*$") then return "reject", "no-user-agent" end
    local lua = lower(ua)
    local r = ai_check(path, lua)
    if r then return "reject", r end
    r = headless_check(ua, lua, h)
    if r then return "reject", r end
    for k = 1, nrej do
      if any_pattern(ua, reject_lists[k]) then return "reject", reject_reasons[k] end
    end
    if any_pattern(ua, other) then return "accept", nil end -- a declared crawler: pass
    r = check_headers(ua, h)
    if r then return "reject", r end
    return "accept", nil
  end
end

return M
