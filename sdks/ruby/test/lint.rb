# frozen_string_literal: true

# Compiles every Ruby file of the gem and its tests with warnings on: a syntax error or any warning (an unused
# variable, a shadowed argument, ...) fails.
warnings = []
Warning.singleton_class.define_method(:warn) { |message, category: nil| warnings << [category, message] }
$VERBOSE = true
files = Dir[File.expand_path("../{lib,test}/**/*.rb", __dir__)].sort
files.each { |file| RubyVM::InstructionSequence.compile_file(file) }
warnings.each { |_category, message| $stderr.write(message) }
abort "#{warnings.size} warnings in #{files.size} files" unless warnings.empty?
puts "#{files.size} files compiled without warnings"
