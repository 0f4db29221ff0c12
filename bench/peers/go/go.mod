module classifybench

go 1.19
