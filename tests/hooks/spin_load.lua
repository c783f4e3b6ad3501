-- Never finishes loading.
while true do end
