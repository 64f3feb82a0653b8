module codeindex/gotypesoracle

go 1.22
